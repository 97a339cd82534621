// Journeys over HTTP against real processes built in dist/ (`npm run build` first; `npm test` does).
module.exports = {
  displayName: 'e2e',
  preset: '../../jest.preset.js',
  rootDir: __dirname,
  setupFiles: [...require('../../jest.preset.js').setupFiles, '<rootDir>/jest-setup.js'],
  testMatch: ['<rootDir>/src/**/*.e2e-spec.ts', '<rootDir>/src/**/*.spec.ts'],
};
