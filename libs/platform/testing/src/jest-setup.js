// Loaded before every test file: decorators need the metadata polyfill, and time is UTC.
require('reflect-metadata');
process.env.TZ = 'UTC';
