// sitedrop drop zone (ui/dropdeploy.templ): deploys a dropped or chosen
// folder, files or zip through the documented API with the browser's
// session cookie (same-origin requests only; see hooks/auth.go).
//
// Signed in, files are hashed here (crypto.subtle), POST /blobs/missing
// says which contents the server lacks, only those are uploaded (PUT
// /blobs/{sha256}, a few at a time), and the deploy names every file by
// its sha256, as `sitedrop deploy` does. Signed out, or where crypto.subtle
// is missing (plain http away from localhost), the bytes go inline in the
// deploy. A zip is sent as it is (Content-Type: application/zip). Files and
// folders whose names start with "." are skipped (.well-known excepted), as
// the CLI skips them.
//
// A deploy can be watched and stopped: hashing (or reading) has its own
// bar, the upload a bar in bytes (XMLHttpRequest upload progress), and the
// final request, which the server may take seconds to answer, shows
// "Publishing" with a moving bar and the time spent. Cancel aborts every
// request in flight; the server stops a deploy whose request is gone and
// commits nothing (sites/intake Work). The zone's data-state says where a
// deploy is: idle, checking, hashing, reading, uploading, publishing,
// done, error or cancelled.
//
// A new site of an account is refused before anything is hashed or sent
// when the plan has no site left (GET /deploys against data-slot-limit);
// the server still decides at the deploy. After a deploy, every element of
// the page with data-refresh and an id is replaced by its fresh copy (the
// page fetched again), and focus goes to the result. Plain ES2017, no
// framework.
(function () {
  "use strict";

  var zone = document.querySelector("[data-drop]");
  if (!zone) return;

  var num = function (name) { return parseInt(zone.getAttribute(name), 10) || 0; };
  var cfg = {
    deployId: zone.getAttribute("data-deploy-id") || "",
    owner: zone.getAttribute("data-owner") === "true",
    maxFiles: num("data-max-files"),
    maxBody: num("data-max-body"),
    maxSite: num("data-max-site"),
    slotLimit: num("data-slot-limit")
  };
  var PARALLEL = 4; // uploads at once
  var MISSING_PHRASE = "is not on the server"; // sites.ContentMissingPhrase

  var target = zone.querySelector(".drop-target");
  var folderInput = zone.querySelector("#drop-folder");
  var filesInput = zone.querySelector("#drop-zip");
  var filesButton = zone.querySelector("[data-drop-files]");
  var prepBar = zone.querySelector("[data-drop-prep]");
  var prepLabel = zone.querySelector("[data-drop-prep-label]");
  var sendBar = zone.querySelector("[data-drop-send]");
  var sendLabel = zone.querySelector("[data-drop-send-label]");
  var detail = zone.querySelector("[data-drop-detail]");
  var cancelButton = zone.querySelector("[data-drop-cancel]");
  var status = zone.querySelector("[role=status]");
  var alertBox = zone.querySelector("[role=alert]");
  var result = zone.querySelector(".drop-result");
  var job = null; // the deploy under way: {cancelled, phase, requests, before}

  // ---- what was dropped or chosen → {files: [{path, file}], skipped} ----

  function hidden(path) {
    return path.split("/").some(function (seg) {
      return seg.charAt(0) === "." && seg !== ".well-known";
    });
  }

  function fileOf(entry) {
    return new Promise(function (resolve, reject) { entry.file(resolve, reject); });
  }

  function readAll(dir) {
    var reader = dir.createReader();
    var out = [];
    return new Promise(function (resolve, reject) {
      (function more() {
        reader.readEntries(function (batch) {
          if (batch.length === 0) return resolve(out);
          out = out.concat(Array.prototype.slice.call(batch));
          more();
        }, reject);
      })();
    });
  }

  // walk adds the files under entry to acc, at prefix + name.
  async function walk(entry, prefix, acc) {
    var path = prefix + entry.name;
    if (hidden(entry.name)) { acc.skipped++; return; }
    if (entry.isFile) {
      acc.files.push({ path: path, file: await fileOf(entry) });
      return;
    }
    if (entry.isDirectory) {
      var children = await readAll(entry);
      for (var i = 0; i < children.length; i++) {
        await walk(children[i], path + "/", acc);
      }
    }
  }

  // fromEntries: a single dropped folder is the site root (its name is
  // not part of the paths); other entries keep their names.
  async function fromEntries(entries) {
    var acc = { files: [], skipped: 0 };
    if (entries.length === 1 && entries[0].isDirectory) {
      var children = await readAll(entries[0]);
      for (var i = 0; i < children.length; i++) await walk(children[i], "", acc);
      return acc;
    }
    for (var j = 0; j < entries.length; j++) await walk(entries[j], "", acc);
    return acc;
  }

  // fromFolderInput: webkitRelativePath is "top/sub/file"; top is the root.
  function fromFolderInput(list) {
    var acc = { files: [], skipped: 0 };
    for (var i = 0; i < list.length; i++) {
      var rel = list[i].webkitRelativePath || list[i].name;
      var path = rel.indexOf("/") >= 0 ? rel.slice(rel.indexOf("/") + 1) : rel;
      if (hidden(path)) { acc.skipped++; continue; }
      acc.files.push({ path: path, file: list[i] });
    }
    return acc;
  }

  // fromFileList: loose files (dropped or chosen) are at the site's root;
  // a single zip is deployed as it is.
  function fromFileList(list) {
    if (list.length === 1 && isZip(list[0])) return { zip: list[0] };
    var acc = { files: [], skipped: 0 };
    list.forEach(function (f) { if (hidden(f.name)) acc.skipped++; else acc.files.push({ path: f.name, file: f }); });
    return acc;
  }

  function isZip(file) {
    return /\.zip$/i.test(file.name) || file.type === "application/zip";
  }

  // ---- words ----

  function formatBytes(n) {
    var units = ["bytes", "KiB", "MiB", "GiB"];
    var i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  // timeLeft is ms ahead for people: "in 24 hours", "in 5 minutes".
  function timeLeft(ms) {
    var min = Math.max(1, Math.round(ms / 60000));
    if (min < 90) return "in " + plural(min, "minute", "minutes");
    return "in " + plural(Math.round(min / 60), "hour", "hours");
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function sumSizes(files) {
    var n = 0;
    for (var i = 0; i < files.length; i++) n += files[i].file.size;
    return n;
  }

  // ---- page state ----

  function say(text) { status.textContent = text; }

  function phase(name) {
    zone.setAttribute("data-state", name);
    if (job) job.phase = name;
  }

  // bar sets a progress bar to done of total (bytes), or moving when
  // done is null (the server is at work and says nothing until it ends).
  function bar(el, done, total) {
    if (done === null) {
      el.removeAttribute("value");
      return;
    }
    el.max = Math.max(total, 1);
    el.value = total > 0 ? Math.min(done, total) : 1;
  }

  // check stops a deploy that was cancelled, between its steps.
  function check() {
    if (job && job.cancelled) throw new Cancelled();
  }

  function reset() {
    alertBox.hidden = true;
    alertBox.textContent = "";
    result.hidden = true;
    prepLabel.textContent = "Hashing";
    sendLabel.textContent = "Upload";
    bar(prepBar, 0, 1);
    bar(sendBar, 0, 1);
    detail.textContent = "";
    say("");
  }

  // setBusy shows the progress in place of the target (both keep their
  // room, see sitedrop.css), keeping the keyboard where it was: on Cancel
  // when it was on a control that the deploy hides or disables.
  function setBusy(on) {
    var focusInZone = zone.contains(document.activeElement);
    zone.classList.toggle("busy", on);
    zone.setAttribute("aria-busy", on ? "true" : "false");
    target.setAttribute("aria-disabled", on ? "true" : "false");
    target.tabIndex = on ? -1 : 0;
    folderInput.disabled = on;
    filesInput.disabled = on;
    filesButton.disabled = on;
    cancelButton.disabled = !on;
    if (on && focusInZone) cancelButton.focus();
  }

  function fail(text) {
    alertBox.textContent = text;
    alertBox.hidden = false;
  }

  function showResult(ans) {
    var url = ans.url;
    var link = result.querySelector("[data-drop-url]");
    link.href = url;
    link.textContent = url;
    link.nextElementSibling.setAttribute("data-copy", url);
    result.querySelector("[data-drop-open]").href = url;
    var claim = result.querySelector("[data-drop-claim]");
    claim.hidden = !ans.claim_url;
    // an anonymous site this server shows only once claimed (awaiting_claim)
    result.querySelector("[data-drop-held]").hidden = !ans.awaiting_claim;
    result.querySelector("[data-drop-live]").textContent = ans.awaiting_claim ? "Published at" : "Live at";
    if (ans.claim_url) {
      var c = result.querySelector("[data-drop-claim-link]");
      c.href = ans.claim_url;
      c.textContent = ans.claim_url;
      c.nextElementSibling.setAttribute("data-copy", ans.claim_url);
      var t = result.querySelector("[data-drop-expires]");
      t.setAttribute("datetime", ans.expires_at);
      t.title = ans.expires_at.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC");
      t.textContent = timeLeft(Date.parse(ans.expires_at) - Date.now());
    }
    showReport(ans.report);
    result.hidden = false;
  }

  // showReport lists what the deploy's quality report found, one line per
  // kind with its first example, as the CLI prints it; nothing when clean.
  function showReport(r) {
    var box = result.querySelector("[data-drop-report]");
    var list = box.querySelector("ul");
    list.textContent = "";
    var lines = [];
    var more = r && r.truncated ? "+" : "";
    if (r) {
      var bl = r.broken_links || [], fm = r.forms || [], ut = r.untitled_pages || [], li = r.large_images || [];
      if (bl.length) lines.push(plural(bl.length, "broken link", "broken links") + more + " (first: " + bl[0].page + " \u2192 " + bl[0].target + ")");
      if (fm.length) lines.push(plural(fm.length, "form", "forms") + more + " with a problem (first: " + fm[0].page + ": " + fm[0].problem + ")");
      if (ut.length) lines.push(plural(ut.length, "page", "pages") + more + " without a title (first: " + ut[0] + ")");
      if (li.length) lines.push(plural(li.length, "image", "images") + more + " over 1 MB (first: " + li[0].path + ", " + formatBytes(li[0].size) + ")");
    }
    lines.forEach(function (text) {
      var item = document.createElement("li");
      item.textContent = text;
      list.appendChild(item);
    });
    box.hidden = lines.length === 0;
  }

  // ---- the API ----

  // ApiError is an answer {"error"} of the API, with its status, or a
  // refusal of the page itself (status 0).
  function ApiError(status, message) {
    this.status = status;
    this.message = message;
  }

  // Cancelled ends a deploy that the person stopped.
  function Cancelled() {
    this.message = "cancelled";
  }

  // request sends one request of the running deploy (so that Cancel can
  // abort it) and resolves with its JSON answer. onUpload(sent) follows
  // the body as it leaves; onSent() runs once all of it has.
  function request(method, path, body, contentType, onUpload, onSent) {
    return new Promise(function (resolve, reject) {
      var mine = job;
      if (mine && mine.cancelled) { reject(new Cancelled()); return; }
      var xhr = new XMLHttpRequest();
      xhr.open(method, path);
      xhr.setRequestHeader("Accept", "application/json");
      if (contentType) xhr.setRequestHeader("Content-Type", contentType);
      if (onUpload) xhr.upload.onprogress = function (ev) { onUpload(ev.loaded); };
      if (onSent) xhr.upload.onload = function () { onSent(); };
      var forget = function () {
        if (mine) mine.requests = mine.requests.filter(function (r) { return r !== xhr; });
      };
      xhr.onload = function () {
        forget();
        var data = null;
        try { data = JSON.parse(xhr.responseText); } catch (e) { data = null; }
        if (xhr.status < 200 || xhr.status > 299) {
          var msg = data && typeof data.error === "string" ? data.error : "The server answered " + xhr.status;
          reject(new ApiError(xhr.status, msg));
          return;
        }
        resolve(data);
      };
      xhr.onerror = function () { forget(); reject(new ApiError(0, "The server could not be reached.")); };
      xhr.onabort = function () { forget(); reject(new Cancelled()); };
      if (mine) mine.requests.push(xhr);
      xhr.send(body === undefined ? null : body);
    });
  }

  function deployPath() {
    return cfg.deployId ? "/deploy/" + encodeURIComponent(cfg.deployId) : "/deploy";
  }

  // publish sends the deploy itself. The server answers once it has
  // checked, compressed and stored every file, which takes seconds for a
  // large site: from the moment the body is sent, the zone says so with a
  // moving bar and the time spent. what names the deploy for people.
  function publish(body, contentType, what) {
    var size = typeof body === "string" ? new Blob([body]).size : body.size;
    var big = size > 256 << 10;
    var started = 0;
    var timer = 0;
    var publishing = function () {
      if (started) return;
      started = Date.now();
      phase("publishing");
      sendLabel.textContent = "Publishing";
      bar(sendBar, null);
      say("Publishing " + what + "\u2026");
      var tick = function () {
        var s = Math.round((Date.now() - started) / 1000);
        detail.textContent = "Publishing " + what + ": the server checks, compresses and stores " +
          "the files, then puts them live\u2026 " + s + " s";
      };
      tick();
      timer = setInterval(tick, 1000);
    };
    var sending = function (sent) {
      if (started) return;
      bar(sendBar, sent, size);
      detail.textContent = "Uploading: " + formatBytes(sent) + " of " + formatBytes(size);
    };
    if (big) {
      phase("uploading");
      sendLabel.textContent = "Upload";
      say("Uploading " + what + " (" + formatBytes(size) + ")\u2026");
      sending(0);
    } else {
      publishing();
    }
    var p = request(cfg.deployId ? "PUT" : "POST", deployPath(), body, contentType, big ? sending : null, publishing);
    var end = function () { clearInterval(timer); };
    return p.then(function (ans) { end(); return ans; }, function (e) { end(); throw e; });
  }

  function hex(buf) {
    var b = new Uint8Array(buf);
    var s = "";
    for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
    return s;
  }

  function base64(file) {
    return new Promise(function (resolve, reject) {
      var r = new FileReader();
      r.onload = function () { var u = String(r.result); resolve(u.slice(u.indexOf(",") + 1)); };
      r.onerror = function () { reject(r.error); };
      r.readAsDataURL(file);
    });
  }

  // prepare reads every file with step (hashing or base64), showing the
  // bytes done on the first bar; label is "Hashing" or "Reading".
  async function prepare(files, label, step) {
    var total = sumSizes(files);
    var done = 0;
    var out = [];
    phase(label === "Hashing" ? "hashing" : "reading");
    prepLabel.textContent = label;
    say(label + " " + plural(files.length, "file", "files") + " (" + formatBytes(total) + ")\u2026");
    var show = function (i) {
      bar(prepBar, done, total);
      detail.textContent = label + ": " + formatBytes(done) + " of " + formatBytes(total) +
        " (" + i + " of " + plural(files.length, "file", "files") + ")";
    };
    show(0);
    for (var i = 0; i < files.length; i++) {
      check();
      out.push(await step(files[i]));
      done += files[i].file.size;
      show(i + 1);
    }
    check();
    return out;
  }

  // uploadMissing asks which contents the server lacks and uploads them,
  // PARALLEL at a time, with their bytes on the second bar. It answers
  // what was uploaded: {count, bytes, have}.
  async function uploadMissing(byHash) {
    var hashes = Object.keys(byHash);
    var ans = await request("POST", "/blobs/missing", JSON.stringify({ hashes: hashes }), "application/json");
    var missing = ans.missing || [];
    var have = hashes.length - missing.length;
    var total = 0;
    for (var m = 0; m < missing.length; m++) {
      if (!byHash[missing[m]]) throw new ApiError(0, "The server asked for content that was not offered");
      total += byHash[missing[m]].file.size;
    }
    phase("uploading");
    sendLabel.textContent = "Upload";
    if (missing.length === 0) {
      bar(sendBar, 1, 1);
      detail.textContent = "Nothing to upload: " + (have === 1 ? "the file is" : "all " + have + " files are") + " already on the server";
      return { count: 0, bytes: 0, have: have };
    }
    say("Uploading " + plural(missing.length, "file", "files") + " (" + formatBytes(total) + ")\u2026");
    var finished = 0; // bytes of the uploads that ended
    var count = 0;
    var inFlight = {}; // hash → bytes sent so far
    var show = function () {
      var sent = finished;
      Object.keys(inFlight).forEach(function (h) { sent += inFlight[h]; });
      bar(sendBar, sent, total);
      detail.textContent = "Uploading: " + formatBytes(sent) + " of " + formatBytes(total) +
        " (" + count + " of " + plural(missing.length, "file", "files") + " done" +
        (have ? ", " + have + " already on the server" : "") + ")";
    };
    show();
    var next = 0;
    async function worker() {
      while (next < missing.length) {
        check();
        var h = missing[next++];
        var f = byHash[h];
        inFlight[h] = 0;
        try {
          await request("PUT", "/blobs/" + h, f.file, "application/octet-stream", function (sent) {
            inFlight[h] = Math.min(sent, f.file.size);
            show();
          });
        } catch (e) {
          if (e instanceof ApiError) e.message = "Upload of " + f.path + " failed: " + e.message;
          throw e;
        }
        delete inFlight[h];
        finished += f.file.size;
        count++;
        show();
      }
    }
    var workers = [];
    for (var i = 0; i < Math.min(PARALLEL, missing.length); i++) workers.push(worker());
    try {
      await Promise.all(workers);
    } catch (e) {
      abortAll(); // one failed: the others stop too
      throw e;
    }
    return { count: count, bytes: total, have: have };
  }

  // deployOwned names every file by hash, uploading what is missing first,
  // and again when the server collected content in between (as the CLI).
  async function deployOwned(files) {
    var byHash = {};
    var entries = await prepare(files, "Hashing", async function (f) {
      var h = hex(await crypto.subtle.digest("SHA-256", await f.file.arrayBuffer()));
      if (!byHash[h]) byHash[h] = f;
      return { path: f.path, sha256: h };
    });
    var distinct = 0;
    Object.keys(byHash).forEach(function (h) { distinct += byHash[h].file.size; });
    if (cfg.maxSite && distinct > cfg.maxSite) {
      throw new ApiError(0, "The site is too large: its files total " + formatBytes(distinct) +
        ", this server takes at most " + formatBytes(cfg.maxSite) + " in one deploy. Nothing was uploaded.");
    }
    var what = plural(files.length, "file", "files") + " (" + formatBytes(sumSizes(files)) + ")";
    for (var attempt = 0; ; attempt++) {
      var up = await uploadMissing(byHash);
      try {
        var ans = await publish(JSON.stringify({ files: entries }), "application/json", what);
        ans.uploaded = up;
        return ans;
      } catch (e) {
        if (attempt >= 1 || !(e instanceof ApiError) || e.status !== 400 || e.message.indexOf(MISSING_PHRASE) < 0) throw e;
      }
    }
  }

  // checkLimits refuses, before anything is sent, what the server would.
  function checkLimits(files, inline) {
    if (files.length === 0) return "There is nothing to deploy: no files (hidden ones are skipped).";
    if (cfg.maxFiles && files.length > cfg.maxFiles) {
      return "Too many files: " + files.length + ", this server takes at most " + cfg.maxFiles + ".";
    }
    if (inline && cfg.maxSite && sumSizes(files) > cfg.maxSite) {
      return "The site is too large: its files total " + formatBytes(sumSizes(files)) + ", this server takes at most " +
        formatBytes(cfg.maxSite) + (cfg.owner ? "." : " from an anonymous deploy. Sign in, or deploy with the command line.");
    }
    if (!cfg.maxBody) return "";
    if (inline) {
      var total = 0;
      for (var i = 0; i < files.length; i++) total += Math.ceil(files[i].file.size / 3) * 4 + files[i].path.length + 64;
      if (total > cfg.maxBody) {
        return "The site is too large to send in one request: about " + formatBytes(total) +
          " encoded, this server takes at most " + formatBytes(cfg.maxBody) +
          (cfg.owner ? "." : ". Sign in to upload files one by one, or deploy with the command line.");
      }
      return "";
    }
    for (var j = 0; j < files.length; j++) {
      if (files[j].file.size > cfg.maxBody) {
        return files[j].path + " is " + formatBytes(files[j].file.size) + ", over this server's limit of " + formatBytes(cfg.maxBody) + " per file.";
      }
    }
    return "";
  }

  // checkSlots, for a signed-in deploy, reads the account's sites now
  // (GET /deploys: the page may be old), to tell later whether a cancel
  // came too late, and refuses a new site when the plan has none left,
  // before anything is hashed or sent. The server still enforces the
  // limit itself.
  async function checkSlots() {
    if (!cfg.owner) return;
    phase("checking");
    say(cfg.deployId ? "Preparing\u2026" : "Checking your plan\u2026");
    var ans = await request("GET", "/deploys");
    job.before = ans;
    if (cfg.deployId || !cfg.slotLimit) return;
    var n = ans && ans.deployments ? ans.deployments.length : 0;
    if (n >= cfg.slotLimit) {
      throw new ApiError(403, "Your plan's " + plural(cfg.slotLimit, "site is", "sites are") + " all in use (" + n + " of " +
        cfg.slotLimit + "): delete a site, or deploy again to one of yours from its page. Nothing was uploaded.");
    }
  }

  async function deployFiles(acc) {
    var files = acc.files.slice().sort(function (a, b) { return a.path < b.path ? -1 : a.path > b.path ? 1 : 0; });
    // one HTML file alone is the site's index.html, as with the CLI
    if (files.length === 1 && /\.html?$/i.test(files[0].path) && files[0].path.indexOf("/") < 0) {
      files[0] = { path: "index.html", file: files[0].file };
    }
    var hashed = cfg.owner && window.crypto && crypto.subtle;
    var problem = checkLimits(files, !hashed);
    if (problem) throw new ApiError(0, problem);
    await checkSlots();
    var skipped = acc.skipped ? " " + plural(acc.skipped, "hidden file or folder", "hidden files or folders") + " skipped." : "";
    var n = plural(files.length, "file", "files");
    var ans;
    if (hashed) {
      ans = await deployOwned(files);
      var up = ans.uploaded;
      say(n + " deployed: " + (up.count === 0 ? "all already on the server, nothing uploaded." :
        up.count + " uploaded (" + formatBytes(up.bytes) + "), " + up.have + " already on the server.") + skipped);
    } else {
      var inline = await prepare(files, "Reading", async function (f) {
        return { path: f.path, content: await base64(f.file), encoding: "base64" };
      });
      ans = await publish(JSON.stringify({ files: inline }), "application/json", n + " (" + formatBytes(sumSizes(files)) + ")");
      say(n + " deployed." + skipped + (cfg.owner ? " (This page is not a secure context, so every file was sent.)" : ""));
    }
    return ans;
  }

  async function deployZip(file) {
    if (cfg.maxBody && file.size > cfg.maxBody) {
      throw new ApiError(0, file.name + " is " + formatBytes(file.size) + ", over this server's limit of " + formatBytes(cfg.maxBody) + ".");
    }
    await checkSlots();
    var ans = await publish(file, "application/zip", file.name + " (" + formatBytes(file.size) + ")");
    say(file.name + " deployed.");
    return ans;
  }

  // ---- after a deploy: nothing stale ----

  // refreshPage fetches this page again and replaces each element marked
  // data-refresh (with an id) by the fresh one of the same id, so that
  // lists and states show the deploy that just happened. Best effort: on
  // failure the page stays as it was.
  async function refreshPage() {
    var marked = Array.prototype.slice.call(document.querySelectorAll("[data-refresh][id]"));
    if (marked.length === 0) return;
    var res = await fetch(location.pathname + location.search, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!res.ok) return;
    var fresh = new DOMParser().parseFromString(await res.text(), "text/html");
    var copies = navigator.clipboard && window.isSecureContext; // as copy.js shows its buttons
    marked.forEach(function (el) {
      if (el.contains(zone) || !el.parentNode) return;
      var now = fresh.getElementById(el.id);
      if (!now || !now.hasAttribute("data-refresh")) return;
      var copy = document.importNode(now, true);
      el.parentNode.replaceChild(copy, el);
      if (copies) {
        Array.prototype.forEach.call(copy.querySelectorAll("button[data-copy]"), function (b) { b.hidden = false; });
      }
    });
  }

  // ---- Cancel ----

  function abortAll() {
    if (!job) return;
    job.requests.slice().forEach(function (xhr) { xhr.abort(); });
  }

  cancelButton.addEventListener("click", function () {
    if (!job || job.cancelled) return;
    job.cancelled = true;
    cancelButton.disabled = true;
    say("Cancelling\u2026");
    abortAll();
  });

  // cancelledText says what a cancel left: nothing before the deploy
  // request; during it, the server stops and commits nothing unless it
  // had already finished, which an owner's site list tells (and then the
  // page's lists are refreshed, as after a deploy).
  async function cancelledText(was, before) {
    var nothing = "Cancelled: nothing was deployed. Drop or choose files again when you are ready.";
    if (was !== "publishing") return nothing;
    if (!cfg.owner) {
      return "Cancelled: the server stops the deploy and keeps nothing, unless it had just finished " +
        "(an anonymous site nobody can claim then expires by itself).";
    }
    try {
      var res = await fetch("/deploys", { credentials: "same-origin", headers: { Accept: "application/json" } });
      var after = res.ok ? await res.json() : null;
      var made = before && after ? deployedSince(before, after) : null;
      if (made) {
        try { await refreshPage(); } catch (e) { /* the page stays as it was */ }
        return "Too late to cancel: the deploy had already finished, and it is live at " + made.url + ".";
      }
    } catch (e) { /* the message below stays true */ }
    return nothing;
  }

  // deployedSince is the site that a list (GET /deploys) shows deployed
  // since the list before: a new site, or this one updated; null if none.
  function deployedSince(before, after) {
    var was = {};
    (before.deployments || []).forEach(function (d) { was[d.id] = d.updated_at; });
    var found = null;
    (after.deployments || []).forEach(function (d) {
      var made = cfg.deployId ? d.id === cfg.deployId && was[d.id] !== d.updated_at : !(d.id in was);
      if (made && !found) found = d;
    });
    return found;
  }

  // run deploys what collect() gives, showing the outcome.
  async function run(collect) {
    if (job) return;
    job = { cancelled: false, phase: "idle", requests: [], before: null };
    var mine = job;
    reset();
    setBusy(true);
    try {
      var what = await collect();
      check();
      var ans = what.zip ? await deployZip(what.zip) : await deployFiles(what);
      phase("done");
      detail.textContent = "";
      showResult(ans);
      job = null;
      setBusy(false);
      result.focus();
      try { await refreshPage(); } catch (e) { /* the page stays as it was */ }
      return;
    } catch (e) {
      var was = mine.phase;
      if (e instanceof Cancelled || mine.cancelled) {
        var text = await cancelledText(was, mine.before);
        phase("cancelled");
        say(text);
      } else {
        phase("error");
        say("");
        fail(e instanceof ApiError ? e.message : "The deploy failed: " + (e && e.message ? e.message : e));
      }
    }
    var keyboard = zone.contains(document.activeElement);
    job = null;
    setBusy(false);
    if (!alertBox.hidden) alertBox.focus();
    else if (keyboard || document.activeElement === document.body) target.focus();
  }

  // ---- events ----

  function hasFiles(ev) {
    return ev.dataTransfer && Array.prototype.indexOf.call(ev.dataTransfer.types, "Files") >= 0;
  }

  // A file dropped beside the zone must not replace the page.
  window.addEventListener("dragover", function (ev) { if (hasFiles(ev)) ev.preventDefault(); });
  window.addEventListener("drop", function (ev) { if (hasFiles(ev)) ev.preventDefault(); });

  target.addEventListener("dragover", function (ev) {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = job ? "none" : "copy";
    if (!job) target.classList.add("over");
  });
  target.addEventListener("dragleave", function () { target.classList.remove("over"); });
  target.addEventListener("drop", function (ev) {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    target.classList.remove("over");
    if (job) return;
    // entries must be taken while the drop event runs
    var items = ev.dataTransfer.items;
    var entries = [];
    for (var i = 0; items && i < items.length; i++) {
      var en = items[i].webkitGetAsEntry ? items[i].webkitGetAsEntry() : null;
      if (en) entries.push(en);
    }
    var list = Array.prototype.slice.call(ev.dataTransfer.files);
    run(async function () {
      if (list.length === 1 && isZip(list[0]) && (entries.length === 0 || entries[0].isFile)) return { zip: list[0] };
      if (entries.length > 0) return fromEntries(entries);
      return fromFileList(list);
    });
  });

  // The target is one button: a click, Enter or Space opens the folder
  // chooser (Space on release, as a button does).
  function browse() { if (!job) folderInput.click(); }
  target.addEventListener("click", browse);
  target.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { ev.preventDefault(); browse(); }
    if (ev.key === " ") ev.preventDefault(); // no scrolling
  });
  target.addEventListener("keyup", function (ev) {
    if (ev.key === " ") { ev.preventDefault(); browse(); }
  });
  filesButton.addEventListener("click", function () { if (!job) filesInput.click(); });

  folderInput.addEventListener("change", function () {
    var list = Array.prototype.slice.call(folderInput.files);
    folderInput.value = "";
    if (list.length) run(async function () { return fromFolderInput(list); });
  });
  filesInput.addEventListener("change", function () {
    var list = Array.prototype.slice.call(filesInput.files);
    filesInput.value = "";
    if (list.length) run(async function () { return fromFileList(list); });
  });
  cancelButton.disabled = true;
})();
