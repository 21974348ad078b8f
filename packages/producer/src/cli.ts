// sluice-producer: the demo payment event producer on the command line (usage: --help, or
// docs/producer.md). This entry only installs the signal handlers and then loads the CLI: loading
// kafkajs and friends takes a moment, and a SIGTERM from `npm run down` in that moment must still
// mean "stop cleanly", not the default instant death.
export {}; // a module, for top-level await

const stop = new AbortController();
let signals = 0;
function onSignal(name: string): void {
  signals++;
  if (signals === 1) {
    console.log(`${name}: stopping after the batch in flight...`);
    stop.abort();
  } else {
    console.error(`${name} again: exiting without flushing`);
    process.exit(130);
  }
}
process.on("SIGINT", () => onSignal("SIGINT"));
process.on("SIGTERM", () => onSignal("SIGTERM"));

const { main } = await import("./cli-main");
main(process.argv.slice(2), stop.signal).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
