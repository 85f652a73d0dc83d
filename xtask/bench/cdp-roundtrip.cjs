// The peer's side of `cargo xtask bench cdp`: the median round trip of
// Runtime.evaluate("1+1") through playwright-core's CDP session, on the same browser
// executable and flags conch-cdp uses. Prints one line of JSON.
"use strict";
const path = require("path");

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const { chromium } = require(path.join(process.env.CONCH_BENCH_NODE, "node_modules", "playwright-core"));
  const executablePath = arg("browser");
  const iterations = Number(arg("iterations", "2000"));
  const flags = JSON.parse(arg("flags", "[]")).filter((f) => f !== "--headless");
  const browser = await chromium.launch({ executablePath, headless: true, args: flags });
  try {
    const page = await browser.newPage();
    const session = await page.context().newCDPSession(page);
    const call = () => session.send("Runtime.evaluate", { expression: "1+1", returnByValue: true });
    for (let i = 0; i < 200; i++) await call();
    const times = [];
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      const reply = await call();
      times.push(Number(process.hrtime.bigint() - start) / 1000);
      if (reply.result.value !== 2) throw new Error("wrong answer");
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    console.log(JSON.stringify({
      client: "playwright-core",
      iterations,
      median_us: times[Math.floor(times.length / 2)],
      p90_us: times[Math.floor(times.length * 0.9)],
      mean_us: mean,
    }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
