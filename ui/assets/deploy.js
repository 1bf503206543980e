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
// the CLI skips them. Plain ES2017, no framework.
(function () {
  "use strict";

  var zone = document.querySelector("[data-drop]");
  if (!zone) return;
  zone.hidden = false;

  var cfg = {
    deployId: zone.getAttribute("data-deploy-id") || "",
    owner: zone.getAttribute("data-owner") === "true",
    maxFiles: parseInt(zone.getAttribute("data-max-files"), 10) || 0,
    maxBody: parseInt(zone.getAttribute("data-max-body"), 10) || 0
  };
  var PARALLEL = 4; // uploads at once
  var MISSING_PHRASE = "is not on the server"; // sites.ContentMissingPhrase

  var target = zone.querySelector(".drop-target");
  var folderInput = zone.querySelector("#drop-folder");
  var zipInput = zone.querySelector("#drop-zip");
  var progress = zone.querySelector("progress");
  var status = zone.querySelector("[role=status]");
  var alertBox = zone.querySelector("[role=alert]");
  var result = zone.querySelector(".drop-result");
  var busy = false;

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

  function isZip(file) {
    return /\.zip$/i.test(file.name) || file.type === "application/zip";
  }

  // ---- page state ----

  function say(text) { status.textContent = text; }

  function fail(text) {
    alertBox.textContent = text;
    alertBox.hidden = false;
  }

  function reset() {
    alertBox.hidden = true;
    alertBox.textContent = "";
    result.hidden = true;
    progress.hidden = true;
    say("");
  }

  function setBusy(on) {
    busy = on;
    folderInput.disabled = on;
    zipInput.disabled = on;
    zone.setAttribute("aria-busy", on ? "true" : "false");
  }

  function showProgress(done, total) {
    progress.hidden = false;
    progress.max = Math.max(total, 1);
    progress.value = done;
  }

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

  function showResult(ans) {
    var url = ans.url;
    var link = result.querySelector("[data-drop-url]");
    link.href = url;
    link.textContent = url;
    link.nextElementSibling.setAttribute("data-copy", url);
    result.querySelector("[data-drop-open]").href = url;
    var claim = result.querySelector("[data-drop-claim]");
    claim.hidden = !ans.claim_url;
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

  // ApiError is an answer {"error"} of the API, with its status.
  function ApiError(status, message) {
    this.status = status;
    this.message = message;
  }

  async function api(method, path, body, contentType) {
    var headers = {};
    if (contentType) headers["Content-Type"] = contentType;
    var res;
    try {
      res = await fetch(path, { method: method, headers: headers, body: body, credentials: "same-origin" });
    } catch (e) {
      throw new ApiError(0, "The server could not be reached: " + e.message);
    }
    var data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) {
      var msg = data && typeof data.error === "string" ? data.error : "The server answered " + res.status;
      throw new ApiError(res.status, msg);
    }
    return data;
  }

  function deployPath(query) {
    var p = cfg.deployId ? "/deploy/" + encodeURIComponent(cfg.deployId) : "/deploy";
    return p + (query || "");
  }

  function deploy(payload) {
    return api(cfg.deployId ? "PUT" : "POST", deployPath(), JSON.stringify(payload), "application/json");
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

  async function inlineFiles(files) {
    var out = [];
    for (var i = 0; i < files.length; i++) {
      say("Reading " + (i + 1) + " of " + files.length + " files…");
      out.push({ path: files[i].path, content: await base64(files[i].file), encoding: "base64" });
    }
    return out;
  }

  // uploadMissing asks which contents the server lacks and uploads them,
  // PARALLEL at a time, with progress.
  async function uploadMissing(byHash) {
    var hashes = Object.keys(byHash);
    var ans = await api("POST", "/blobs/missing", JSON.stringify({ hashes: hashes }), "application/json");
    var missing = ans.missing || [];
    var have = hashes.length - missing.length;
    var done = 0;
    var line = function () {
      say(done + " of " + missing.length + " uploaded, " + have + " already on the server");
    };
    showProgress(0, missing.length);
    line();
    var next = 0;
    async function worker() {
      while (next < missing.length) {
        var h = missing[next++];
        var f = byHash[h];
        if (!f) throw new ApiError(0, "The server asked for content that was not offered");
        try {
          await api("PUT", "/blobs/" + h, f.file, "application/octet-stream");
        } catch (e) {
          e.message = "Upload of " + f.path + " failed: " + e.message;
          throw e;
        }
        done++;
        showProgress(done, missing.length);
        line();
      }
    }
    var workers = [];
    for (var i = 0; i < Math.min(PARALLEL, missing.length); i++) workers.push(worker());
    await Promise.all(workers);
  }

  // deployOwned names every file by hash, uploading what is missing first,
  // and again when the server collected content in between (as the CLI).
  async function deployOwned(files) {
    var byHash = {};
    var entries = [];
    for (var i = 0; i < files.length; i++) {
      say("Hashing " + (i + 1) + " of " + files.length + " files…");
      var h = hex(await crypto.subtle.digest("SHA-256", await files[i].file.arrayBuffer()));
      if (!byHash[h]) byHash[h] = files[i];
      entries.push({ path: files[i].path, sha256: h });
    }
    for (var attempt = 0; ; attempt++) {
      await uploadMissing(byHash);
      try {
        return await deploy({ files: entries });
      } catch (e) {
        if (attempt >= 1 || e.status !== 400 || e.message.indexOf(MISSING_PHRASE) < 0) throw e;
      }
    }
  }

  // checkLimits refuses, before anything is sent, what the server would.
  function checkLimits(files, inline) {
    if (files.length === 0) return "There is nothing to deploy: no files (hidden ones are skipped).";
    if (cfg.maxFiles && files.length > cfg.maxFiles) {
      return "Too many files: " + files.length + ", this server takes at most " + cfg.maxFiles + ".";
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

  async function deployFiles(acc) {
    var files = acc.files.slice().sort(function (a, b) { return a.path < b.path ? -1 : a.path > b.path ? 1 : 0; });
    // one HTML file alone is the site's index.html, as with the CLI
    if (files.length === 1 && /\.html?$/i.test(files[0].path) && files[0].path.indexOf("/") < 0) {
      files[0] = { path: "index.html", file: files[0].file };
    }
    var hashed = cfg.owner && window.crypto && crypto.subtle;
    var problem = checkLimits(files, !hashed);
    if (problem) throw new ApiError(0, problem);
    var skipped = acc.skipped ? " " + plural(acc.skipped, "hidden file or folder", "hidden files or folders") + " skipped." : "";
    var ans;
    if (hashed) {
      ans = await deployOwned(files);
      say(status.textContent + ". " + plural(files.length, "file", "files") + " deployed." + skipped);
    } else {
      var inline = await inlineFiles(files);
      say("Sending " + plural(files.length, "file", "files") + "…");
      ans = await deploy({ files: inline });
      say(plural(files.length, "file", "files") + " deployed." + skipped +
        (cfg.owner ? " (This page is not a secure context, so every file was sent.)" : ""));
    }
    return ans;
  }

  async function deployZip(file) {
    if (cfg.maxBody && file.size > cfg.maxBody) {
      throw new ApiError(0, file.name + " is " + formatBytes(file.size) + ", over this server's limit of " + formatBytes(cfg.maxBody) + ".");
    }
    say("Sending " + file.name + " (" + formatBytes(file.size) + ")…");
    var ans = await api(cfg.deployId ? "PUT" : "POST", deployPath(), file, "application/zip");
    say(file.name + " deployed.");
    return ans;
  }

  // run deploys what collect() gives, showing the outcome.
  async function run(collect) {
    if (busy) return;
    reset();
    setBusy(true);
    try {
      var what = await collect();
      var ans = what.zip ? await deployZip(what.zip) : await deployFiles(what);
      showResult(ans);
    } catch (e) {
      progress.hidden = true;
      fail(e instanceof ApiError ? e.message : "The deploy failed: " + (e && e.message ? e.message : e));
    } finally {
      setBusy(false);
    }
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
    ev.dataTransfer.dropEffect = "copy";
    target.classList.add("over");
  });
  target.addEventListener("dragleave", function () { target.classList.remove("over"); });
  target.addEventListener("drop", function (ev) {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    target.classList.remove("over");
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
      var acc = { files: [], skipped: 0 };
      list.forEach(function (f) { if (hidden(f.name)) acc.skipped++; else acc.files.push({ path: f.name, file: f }); });
      return acc;
    });
  });

  folderInput.addEventListener("change", function () {
    var list = Array.prototype.slice.call(folderInput.files);
    folderInput.value = "";
    if (list.length) run(async function () { return fromFolderInput(list); });
  });
  zipInput.addEventListener("change", function () {
    var f = zipInput.files[0];
    zipInput.value = "";
    if (f) run(async function () { return { zip: f }; });
  });
})();
