export * from './test-database';
export * from './saml-idp';
export * from './fake-llm-server';
export * from './fake-embedding-server';
export * from './pdf';
export * from './fake-transcription-server';
export * from './tiny-onnx-model';
export * from './bombs';
