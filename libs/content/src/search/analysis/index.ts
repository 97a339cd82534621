export { analyze, analyzeQuery, tokenize, type AnalyzedToken } from './analyze';
