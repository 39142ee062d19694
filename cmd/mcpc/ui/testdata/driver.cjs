// A headless Chromium for ui's browser test, driven through playwright-core:
// one JSON command per line on stdin, one JSON answer per line on stdout.
// argv[2] is the browser's executable. Nothing here has a timeout of its
// own: the Go test's deadline ends a wait that never ends.
"use strict";
const { chromium } = require("playwright-core");
const readline = require("readline");

async function main() {
  const browser = await chromium.launch({
    executablePath: process.argv[2],
    headless: true,
    // chromium's sandbox needs user namespaces that a root CI lacks.
    args: ["--no-sandbox"],
    timeout: 0,
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(0);
  page.setDefaultNavigationTimeout(0);
  let dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.accept();
  });
  const ops = {
    async goto(c) {
      const resp = await page.goto(c.url, { waitUntil: "load" });
      return { status: resp.status(), url: page.url() };
    },
    // click a submit button and wait until the page it leads to is loaded.
    async submit(c) {
      dialogs = [];
      const [resp] = await Promise.all([
        page.waitForNavigation({ waitUntil: "load" }),
        page.click(c.selector),
      ]);
      return { status: resp ? resp.status() : 0, url: page.url(), dialogs };
    },
    async fill(c) {
      await page.fill(c.selector, c.value);
      return {};
    },
    async text(c) {
      return { text: (await page.textContent(c.selector)).trim() };
    },
    async count(c) {
      return { count: await page.locator(c.selector).count() };
    },
    async content() {
      return { text: await page.content() };
    },
    async screenshot(c) {
      await page.screenshot({ path: c.path, fullPage: true });
      return {};
    },
  };
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const c = JSON.parse(line);
    let answer;
    try {
      answer = { ok: true, ...(await ops[c.op](c)) };
    } catch (e) {
      answer = { ok: false, error: String(e && e.message ? e.message : e) };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
  await browser.close();
}

main().catch((e) => {
  process.stderr.write("driver: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
