// A headless Chromium for ui's browser test, driven through playwright-core:
// one JSON command per line on stdin, one JSON answer per line on stdout.
// argv[2] is the browser's executable. Nothing here has a timeout of its
// own: the Go test's deadline ends a wait that never ends.
"use strict";
const { chromium } = require("playwright-core");
const readline = require("readline");
const fs = require("fs");

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
      await page.screenshot({ path: c.path, fullPage: !!c.full });
      return {};
    },
    // click something that does not leave the page (a summary, a select).
    async click(c) {
      dialogs = [];
      await page.click(c.selector);
      return { dialogs };
    },
    // press a key on the focused element; navigate: wait for the page it
    // submits to.
    async press(c) {
      dialogs = [];
      if (c.navigate) {
        const [resp] = await Promise.all([
          page.waitForNavigation({ waitUntil: "load" }),
          page.keyboard.press(c.key),
        ]);
        return { status: resp ? resp.status() : 0, url: page.url(), dialogs };
      }
      await page.keyboard.press(c.key);
      return { dialogs };
    },
    async focus(c) {
      await page.focus(c.selector);
      return {};
    },
    // type into the focused element, key by key.
    async type(c) {
      await page.keyboard.type(c.value);
      return {};
    },
    // the focused element: its tag, name, class and text.
    async focused() {
      const text = await page.evaluate(() => {
        const e = document.activeElement;
        return e ? [e.tagName.toLowerCase(), e.getAttribute("name") || "", e.className || "", (e.textContent || "").trim()].join("|") : "";
      });
      return { text };
    },
    async select(c) {
      await page.selectOption(c.selector, c.value);
      return {};
    },
    // visible: how many elements of the selector are visible.
    async visible(c) {
      const n = await page.locator(c.selector).evaluateAll((els) => els.filter((e) => e.offsetParent !== null).length);
      return { count: n };
    },
    // overflow: how many pixels the page is wider than the window.
    async overflow() {
      const n = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      return { count: n };
    },
    // waitText: until the selector's text contains c.value (the page's
    // script updates it).
    async waitText(c) {
      await page.waitForFunction(([sel, want]) => {
        const e = document.querySelector(sel);
        return e && e.textContent.includes(want);
      }, [c.selector, c.value], { timeout: 0, polling: 100 });
      return {};
    },
    // axe: axe-core's violations of the page, as "impact id: help (n)"
    // lines (evaluated, not a script tag: the page's CSP allows none).
    async axe(c) {
      await page.evaluate(fs.readFileSync(c.path, "utf8"));
      const res = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ["violations"] });
        return r.violations.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")})`);
      });
      return { text: res.join("\n"), count: res.length };
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
