// Lighthouse audit of sitedrop's pages: accessibility and best practices
// must score 100 on every page, and the mobile cumulative layout shift
// (content pushed down after it showed) stay under MAX_CLS. Run by .ci/lighthouse.sh, which starts the
// server, makes the data the pages show and passes the pages as JSON in
// LH_PAGES: [{"name", "url", "cookie"?}]. One Chromium serves every audit.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";

const pages = JSON.parse(process.env.LH_PAGES);
// MAX_CLS is the highest cumulative layout shift a page may have (mobile
// emulation, Lighthouse's default); Google calls 0.1 good, we ask less.
const MAX_CLS = 0.05;
// The categories that must score 100.
const CATEGORIES = ["accessibility", "best-practices"];
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
      onlyCategories: CATEGORIES,
      // only these audits of the performance category (the shift and what
      // moved): they need a trace, not the whole (slow) performance run
      onlyAudits: ["cumulative-layout-shift", "layout-shifts"],
      extraHeaders: p.cookie ? { Cookie: p.cookie } : undefined,
    };
    const result = await lighthouse(p.url, flags);
    const lhr = result.lhr;
    if (lhr.runtimeError) {
      console.log(`FAIL ${p.name}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
      failed++;
      continue;
    }
    const cats = CATEGORIES.map((id) => lhr.categories[id]);
    const scores = cats.map((c) => `${c.title} ${Math.round(c.score * 100)}`);
    const cls = lhr.audits["cumulative-layout-shift"]?.numericValue;
    const badCLS = typeof cls !== "number" || !(cls < MAX_CLS);
    const bad = cats.some((c) => c.score !== 1) || badCLS;
    const clsText = typeof cls === "number" ? cls.toFixed(3) : "not measured";
    console.log(`${bad ? "FAIL" : "ok  "} ${p.name.padEnd(22)} ${scores.join(", ")}, CLS ${clsText}  (${lhr.finalDisplayedUrl})`);
    if (badCLS) {
      console.log(`       cumulative-layout-shift: ${clsText}, want < ${MAX_CLS} (content moves after it showed)`);
      const shifts = lhr.audits["layout-shifts"]?.details?.items || [];
      for (const item of shifts.slice(0, 5)) {
        console.log(`         ${item.node?.snippet || ""}  shift ${item.score?.toFixed?.(3) ?? ""}`);
      }
    }
    if (bad) failed++;
    if (cats.some((c) => c.score !== 1)) {
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
  console.log(`\n${failed} page(s) below 100 or with CLS ≥ ${MAX_CLS}`);
  process.exit(1);
}
