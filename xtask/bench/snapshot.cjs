// The peer's side of `cargo xtask bench snapshot`: the median time of Playwright's AI
// snapshot (`page.ariaSnapshot({ mode: "ai" })`, what Playwright MCP returns) of one page,
// on the same browser executable and flags Conch uses. Prints one line of JSON.
"use strict";
const path = require("path");

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const { chromium } = require(path.join(process.env.CONCH_BENCH_NODE, "node_modules", "playwright-core"));
  const iterations = Number(arg("iterations", "20"));
  const flags = JSON.parse(arg("flags", "[]")).filter((f) => f !== "--headless");
  const browser = await chromium.launch({ executablePath: arg("browser"), headless: true, args: flags });
  try {
    const page = await browser.newPage();
    await page.goto(arg("url"));
    let text = "";
    for (let i = 0; i < 5; i++) text = await page.ariaSnapshot({ mode: "ai" });
    const times = [];
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      text = await page.ariaSnapshot({ mode: "ai" });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(JSON.stringify({
      client: "playwright",
      iterations,
      median_ms: times[Math.floor(times.length / 2)],
      chars: text.length,
    }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
