// The shared test helpers, under the names core's tests use.
export { rejection, throwsCode, rejectsCode, collect } from '@signalyard/test-utils';
