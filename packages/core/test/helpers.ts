// The shared test helpers, under the names core's tests use.
export { thrown, rejection, expectCode, throwsCode, rejectsCode, collect } from '@signalyard/test-utils';
