export { Gate, type GateOptions } from './gate';
