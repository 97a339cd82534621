// jest's node environment with the process's own typed-array constructors inside the test sandbox
// (jest already does this for Uint8Array, so Buffers work). Native addons create their arrays in
// the process's realm: onnxruntime-node's output tensors failed its `instanceof Float32Array`
// checks against the sandbox's constructors. The service itself has no sandbox and needs nothing.
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class KbNodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) if (globalThis[name]) this.global[name] = globalThis[name];
  }
}

module.exports = KbNodeEnvironment;
