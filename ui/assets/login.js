// sitedrop sign-in: e-mail address, then the one-time code sent to it.
// Plain ES2017, no framework. The page is /auth/login (ui/login.templ); its
// forms also work without this script (they post to /auth/login and
// /auth/login/code), which takes them over with JSON calls.
(function () {
  "use strict";

  var root = document.getElementById("login");
  if (!root) return;

  var emailForm = document.getElementById("email-step");
  var codeForm = document.getElementById("code-step");
  var emailInput = document.getElementById("email");
  var codeInput = document.getElementById("code");
  var codeSent = document.getElementById("code-sent");
  var change = document.getElementById("change-email");
  var status = document.getElementById("login-status");
  var otpField = document.getElementById("otp-id");
  var serverError = document.getElementById("login-error");
  // the server shows the code step itself after a form post
  var otpId = otpField.value;
  var busy = false;

  // safeNext only lets same-origin paths through: "/x" but not "//host",
  // "/\host" or anything with control characters (which URL parsing drops).
  function safeNext(v) {
    var fallback = "/account";
    if (typeof v !== "string" || v.charAt(0) !== "/" || v.charAt(1) === "/" || v.charAt(1) === "\\") {
      return fallback;
    }
    if (/[\u0000-\u001f\u007f]/.test(v)) return fallback;
    try {
      var u = new URL(v, window.location.href);
      if (u.origin !== window.location.origin) return fallback;
    } catch (e) {
      return fallback;
    }
    return v;
  }

  function say(text, kind) {
    if (serverError) serverError.hidden = true;
    status.textContent = text;
    status.className = "status" + (kind ? " " + kind : "");
  }

  function setBusy(form, on) {
    busy = on;
    var buttons = form.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = on;
    form.setAttribute("aria-busy", on ? "true" : "false");
  }

  async function post(url, body) {
    var res;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        credentials: "same-origin",
        body: JSON.stringify(body)
      });
    } catch (e) {
      return { ok: false, error: "Could not reach the server. Check your connection and try again." };
    }
    var data = null;
    try {
      data = await res.json();
    } catch (e) {
      data = null;
    }
    if (res.ok && data) return { ok: true, data: data };
    var msg = data && typeof data.error === "string" && data.error ? data.error : "";
    if (!msg && data && typeof data.message === "string") msg = data.message;
    if (!msg) {
      msg = res.status === 429
        ? "Too many attempts. Wait a minute and try again."
        : "Something went wrong (HTTP " + res.status + "). Please try again.";
    }
    return { ok: false, status: res.status, error: msg };
  }

  function showStep(step) {
    var code = step === "code";
    emailForm.hidden = code;
    codeForm.hidden = !code;
    (code ? codeInput : emailInput).focus();
  }

  emailForm.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    if (busy) return;
    var email = emailInput.value.trim();
    if (!email || !emailInput.checkValidity()) {
      say("Enter a valid e-mail address.", "error");
      emailInput.setAttribute("aria-invalid", "true");
      emailInput.focus();
      return;
    }
    emailInput.removeAttribute("aria-invalid");
    setBusy(emailForm, true);
    say("Sending a code…");
    var r = await post("/auth/otp", { email: email });
    setBusy(emailForm, false);
    if (!r.ok || typeof r.data.otp_id !== "string" || !r.data.otp_id) {
      say(r.ok ? "Something went wrong. Please try again." : r.error, "error");
      emailInput.focus();
      return;
    }
    otpId = r.data.otp_id;
    otpField.value = otpId;
    codeSent.textContent = "We sent a code to " + email + ". It may take a minute to arrive.";
    codeInput.value = "";
    showStep("code");
    say("Code sent. Check your inbox.");
  });

  codeForm.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    if (busy) return;
    var code = codeInput.value.replace(/\s+/g, "");
    if (!code) {
      say("Enter the code from the e-mail.", "error");
      codeInput.setAttribute("aria-invalid", "true");
      codeInput.focus();
      return;
    }
    codeInput.removeAttribute("aria-invalid");
    setBusy(codeForm, true);
    say("Checking the code…");
    var r = await post("/auth/verify", { otp_id: otpId, code: code });
    if (!r.ok) {
      setBusy(codeForm, false);
      say(r.error, "error");
      codeInput.focus();
      codeInput.select();
      return;
    }
    say("Signed in. Taking you there…", "ok");
    window.location.assign(safeNext(root.getAttribute("data-next")));
  });

  change.addEventListener("click", function (ev) {
    ev.preventDefault();
    if (busy) return;
    otpId = "";
    otpField.value = "";
    say("");
    showStep("email");
  });
})();
