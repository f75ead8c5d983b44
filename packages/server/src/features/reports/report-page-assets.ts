/**
 * The report's only style sheet and script (report-html.ts inlines both), and the Content-Security-Policy that
 * allows exactly these two by their SHA-256 and nothing else: no request to anywhere, images only as data: URIs.
 * The page states the same policy in a <meta> tag, so a copy opened from disk is held to it too.
 */
import { createHash } from "node:crypto";

export const reportStyle = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--text:#1b1f24;--muted:#5b6470;--line:#dde1e6;--code:#f1f3f5;
--pass:#16794a;--pass-bg:#e3f4ea;--fail:#b4232c;--fail-bg:#fbe7e8;--skip:#6b6f76;--skip-bg:#eceef1;--warn:#8a5a00;
--warn-bg:#fdf1d8;--run:#1d5fd0;--run-bg:#e5edfb;--accent:#1d5fd0}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--card:#1a1e24;--text:#e6e9ed;--muted:#9aa3ad;--line:#2c323a;
--code:#20252c;--pass:#5fd39a;--pass-bg:#173526;--fail:#ff8a8f;--fail-bg:#3d1c20;--skip:#a8adb4;--skip-bg:#262b31;
--warn:#f3c567;--warn-bg:#3a2e14;--run:#8cb4ff;--run-bg:#1b2a45;--accent:#8cb4ff}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main,header.top,footer{max-width:1120px;margin:0 auto;padding:0 16px}
header.top{padding-top:24px;padding-bottom:8px}
h1{font-size:1.6rem;margin:.2rem 0;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:0 0 12px}
h3{font-size:1rem;margin:0;overflow-wrap:anywhere}
.eyebrow{color:var(--muted);font-size:.85rem;letter-spacing:.02em}
.sub{color:var(--muted);margin:.2rem 0 0;overflow-wrap:anywhere}
section.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px;margin:16px 0}
.badge{display:inline-block;border-radius:999px;padding:1px 10px;font-size:.8rem;font-weight:600;white-space:nowrap;
background:var(--skip-bg);color:var(--skip);vertical-align:middle}
.s-passed{background:var(--pass-bg);color:var(--pass)}
.s-failed,.s-errored{background:var(--fail-bg);color:var(--fail)}
.s-cancelled,.s-flaky,.s-quarantined{background:var(--warn-bg);color:var(--warn)}
.s-running,.s-queued{background:var(--run-bg);color:var(--run)}
.counts{display:grid;grid-template-columns:repeat(auto-fit,minmax(110px,1fr));gap:10px;margin:16px 0 0}
.count{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px}
.count b{display:block;font-size:1.5rem;line-height:1.2}
.count span{color:var(--muted);font-size:.85rem}
.count.bad b{color:var(--fail)}.count.good b{color:var(--pass)}.count.warn b{color:var(--warn)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:16px 0 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}
td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.name{overflow-wrap:anywhere;min-width:12rem}
.cls{color:var(--muted);font-size:.82rem}
.groups{margin:0 0 12px;padding:0;list-style:none}
.groups li{padding:6px 0;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
.groups li:last-child{border:0}
article.failure{border:1px solid var(--line);border-left:4px solid var(--fail);border-radius:8px;padding:12px;margin:12px 0;
display:grid;grid-template-columns:1fr auto;gap:4px 16px}
article.failure.quarantined{border-left-color:var(--warn)}
article.failure>.body{min-width:0}
.meta{color:var(--muted);font-size:.85rem;margin:2px 0 8px;overflow-wrap:anywhere}
pre{background:var(--code);border-radius:6px;padding:8px 10px;margin:6px 0;overflow-x:auto;white-space:pre-wrap;
overflow-wrap:anywhere;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.message{border-left:3px solid var(--fail);font-weight:600}
details summary{cursor:pointer;color:var(--accent);font-size:.88rem}
ol.tries{margin:4px 0 0;padding-left:1.3rem;font-size:.88rem}
ol.tries li{overflow-wrap:anywhere}
figure.shot{margin:0;text-align:center;font-size:.78rem;color:var(--muted);max-width:200px;overflow-wrap:anywhere}
figure.shot img{display:block;max-width:180px;height:auto;border:1px solid var(--line);border-radius:6px;margin:0 auto 4px}
.note{color:var(--muted);font-size:.85rem}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 10px}
.controls input{flex:1 1 220px;min-width:0;padding:6px 10px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--text);font:inherit}
.controls button{padding:5px 12px;border:1px solid var(--line);border-radius:999px;background:var(--bg);color:var(--text);font:inherit;font-size:.85rem;cursor:pointer}
.controls button[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:var(--card)}
tr.hidden{display:none}
.narrow-only{display:none}
footer{color:var(--muted);font-size:.8rem;padding-bottom:32px}
footer p{overflow-wrap:anywhere}
@media (max-width:640px){body{font-size:14px}article.failure{grid-template-columns:1fr}figure.shot{max-width:none}
h1{font-size:1.3rem}dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:6px}.hide-narrow{display:none}.narrow-only{display:inline}
section.card{padding:12px}th,td{padding:5px 4px}td.name{min-width:8.5rem}}
@media print{.controls{display:none}details{display:block}}
`.trim();

/** Filters the table of all tests by status and text, and sorts it by duration; the page reads well without it. */
export const reportScript = `
(function(){
var table=document.getElementById("all-tests");if(!table)return;
var rows=Array.prototype.slice.call(table.tBodies[0].rows);
var search=document.getElementById("test-search");var buttons=document.querySelectorAll("[data-status-filter]");
var status="all";
function apply(){var q=(search&&search.value||"").toLowerCase();var shown=0;
rows.forEach(function(r){var ok=(status==="all"||r.getAttribute("data-status")===status)&&(!q||r.textContent.toLowerCase().indexOf(q)>=0);
r.classList.toggle("hidden",!ok);if(ok)shown++;});
var c=document.getElementById("shown-count");if(c)c.textContent=String(shown);}
Array.prototype.forEach.call(buttons,function(b){b.addEventListener("click",function(){status=b.getAttribute("data-status-filter");
Array.prototype.forEach.call(buttons,function(o){o.setAttribute("aria-pressed",String(o===b));});apply();});});
if(search)search.addEventListener("input",apply);
var sort=document.getElementById("sort-duration");var slowest=false;
if(sort)sort.addEventListener("click",function(){slowest=!slowest;sort.setAttribute("aria-pressed",String(slowest));
var ordered=rows.slice();if(slowest)ordered.sort(function(a,b){return Number(b.getAttribute("data-ms"))-Number(a.getAttribute("data-ms"));});
var body=table.tBodies[0];ordered.forEach(function(r){body.appendChild(r);});});
})();
`.trim();

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** What the page may load and run: its own style and script (by hash), images inlined as data: URIs; nothing else. */
export const reportPolicy = [
  "default-src 'none'",
  `style-src ${sha256(reportStyle)}`,
  `script-src ${sha256(reportScript)}`,
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/**
 * On the HTTP response: the page's own policy, and a sandbox (allowing only its script) so that opened from the
 * API's address it runs in an origin of its own, with no access to the dashboard's cookies; not framed elsewhere.
 */
export const reportResponsePolicy = `${reportPolicy}; frame-ancestors 'none'; sandbox allow-scripts`;
