// Lighthouse audit of sitedrop's pages: accessibility and best practices
// must score 100 on every page. Run by .ci/lighthouse.sh, which starts the
// server, makes the data the pages show and passes the pages as JSON in
// LH_PAGES: [{"name", "url", "cookie"?}]. One Chromium serves every audit.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";

const pages = JSON.parse(process.env.LH_PAGES);
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  chromeFlags: [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-quic",
  ],
});
let failed = 0;
try {
  for (const p of pages) {
    const flags = {
      port: chrome.port,
      output: "json",
      logLevel: "error",
      onlyCategories: ["accessibility", "best-practices"],
      extraHeaders: p.cookie ? { Cookie: p.cookie } : undefined,
    };
    const result = await lighthouse(p.url, flags);
    const lhr = result.lhr;
    if (lhr.runtimeError) {
      console.log(`FAIL ${p.name}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
      failed++;
      continue;
    }
    const scores = Object.values(lhr.categories).map((c) => `${c.title} ${Math.round(c.score * 100)}`);
    const bad = Object.values(lhr.categories).some((c) => c.score !== 1);
    console.log(`${bad ? "FAIL" : "ok  "} ${p.name.padEnd(22)} ${scores.join(", ")}  (${lhr.finalDisplayedUrl})`);
    if (bad) {
      failed++;
      for (const a of Object.values(lhr.audits)) {
        if (a.score !== null && a.score < 1 && (a.scoreDisplayMode === "binary" || a.scoreDisplayMode === "numeric")) {
          console.log(`       ${a.id}: ${a.title}`);
          for (const item of (a.details?.items || []).slice(0, 5)) {
            const n = item.node;
            if (n) console.log(`         ${n.snippet}  ${n.explanation ? "— " + n.explanation.split("\n")[0] : ""}`);
            else if (item.description) console.log(`         ${item.description}`);
            else if (item.source?.url || item.url) console.log(`         ${item.source?.url || item.url}`);
          }
        }
      }
    }
  }
} finally {
  await chrome.kill();
}
if (failed) {
  console.log(`\n${failed} page(s) below 100`);
  process.exit(1);
}
