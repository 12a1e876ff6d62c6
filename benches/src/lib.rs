//! Benchmarks for squall live in `benches/`.
