/** The little of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface Result {
    duration: number;
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    latency: { p50: number; p99: number };
  }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
