// What the page is showing: the one mutable object the controller changes and the views read.
export const state = {
  info: {
    mode: 'live',
    actions: { approve: false, fork: false, rewind: false },
    by: 'inspector',
    inbox: false,
    replay: false,
  },
  sessions: [],
  selected: undefined, // session key
  version: undefined, // a past version being viewed; undefined = current
  filter: '',
};
