// The e2e journeys test behaviour, not throughput: the services they start run one model worker
// (EMBEDDING_WORKERS, default the machine's cores) so that several suites' processes on the CI
// machine's two cores do not each load a second model. The pool itself is tested with several
// workers (use-lite-pool.spec). Benchmarks run outside jest and keep the defaults.
process.env.EMBEDDING_WORKERS ??= '1';
