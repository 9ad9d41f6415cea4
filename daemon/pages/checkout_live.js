(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var d = live.dataset;
  if (d.pending === "true") {
    setTimeout(function () { location.reload(); }, 2000);
    return;
  }
  var button = document.getElementById("live-pay");
  var status = document.getElementById("live-status");
  if (!button || !status) { return; }
  function say(text) { status.textContent = text; }
  var eth = window.ethereum;
  if (!eth || typeof eth.request !== "function") {
    say("No wallet found. Open this page in a browser with an Ethereum wallet (or in your wallet app's browser).");
    button.disabled = true;
    return;
  }
  function sign(account, typed) {
    return eth.request({ method: "eth_signTypedData_v4", params: [account, JSON.stringify(typed)] });
  }
  async function connect() {
    say("Connecting to your wallet…");
    var accounts = await eth.request({ method: "eth_requestAccounts" });
    if (!accounts || !accounts.length) { throw new Error("The wallet shared no account."); }
    var want = Number(d.chainId);
    var have = parseInt(await eth.request({ method: "eth_chainId" }), 16);
    if (have !== want) {
      say("Switching your wallet to the right network…");
      try {
        await eth.request({ method: "wallet_switchEthereumChain", params: [{ chainId: "0x" + want.toString(16) }] });
      } catch (e) {
        throw new Error("Switch your wallet to chain " + want + " and try again.");
      }
    }
    return accounts[0];
  }
  async function post(body) {
    say("Submitting…");
    var to = d.authorizationUrl;
    if (d.coupon) { to += "?" + new URLSearchParams({ coupon: d.coupon }).toString(); }
    var res = await fetch(to, { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", Accept: "application/json" } });
    var out = await res.json();
    if (!res.ok) { throw new Error(out.error ? out.error.message : "It did not go through."); }
    say("Submitted. Waiting for confirmation…");
    location.assign(out.receipt_url);
  }
  async function go() {
    button.disabled = true;
    var account = await connect();
    // The URL may carry a query of its own (a plan change's plan and at).
    var termsUrl = new URL(d.authorizationUrl, location.href);
    termsUrl.searchParams.set("payer", account);
    if (d.externalCustomerId) { termsUrl.searchParams.set("external_customer_id", d.externalCustomerId); }
    var res = await fetch(termsUrl.toString(), { headers: { Accept: "application/json" } });
    var terms = await res.json();
    if (!res.ok) { throw new Error(terms.error ? terms.error.message : "It could not be prepared."); }
    var body;
    if (terms.kind === "plan") {
      say("Sign the subscription's terms in your wallet…");
      var planSig = await sign(account, terms.plan);
      say("Sign the spending permit in your wallet: " + terms.permit_summary.text + "…");
      var permitSig = await sign(account, terms.permit);
      body = { plan: terms.plan.message, signature: planSig,
        permit: { value: terms.permit.message.value, deadline: terms.permit.message.deadline, signature: permitSig } };
      if (d.externalCustomerId) { body.external_customer_id = d.externalCustomerId; }
    } else if (terms.kind === "permit") {
      say("Sign the renewed spending permit in your wallet: " + terms.permit_summary.text + "…");
      var sig = await sign(account, terms.permit);
      body = { value: terms.permit.message.value, deadline: terms.permit.message.deadline, signature: sig };
    } else if (terms.kind === "revoke") {
      say("Sign the revocation in your wallet…");
      var revokeSig = await sign(account, terms.typed_data);
      body = { payer: account, deadline: terms.typed_data.message.deadline, signature: revokeSig };
    } else {
      say("Sign the payment in your wallet…");
      var paySig = await sign(account, terms.typed_data);
      body = Object.assign({}, terms.typed_data.message, { signature: paySig });
    }
    await post(body);
  }
  button.addEventListener("click", function () {
    go().catch(function (e) {
      say((e && e.message) || String(e));
      button.disabled = false;
    });
  });
})();
