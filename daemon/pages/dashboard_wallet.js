// The settlement wallet change: the browser wallet (EIP-1193) gives its
// address, the dashboard issues the single-use challenge for it, the wallet
// signs it (personal_sign) and the signature is posted as a form.
(function () {
  var button = document.getElementById("connect-wallet");
  var status = document.getElementById("wallet-status");
  var form = document.getElementById("wallet-set");
  if (!button || !form) return;
  function say(text) { status.textContent = text; }
  button.addEventListener("click", async function () {
    var eth = window.ethereum;
    if (!eth) { say("No browser wallet found: install one, or use tollgate admin wallet."); return; }
    button.disabled = true;
    try {
      var accounts = await eth.request({ method: "eth_requestAccounts" });
      var address = accounts[0];
      say("Asking for a challenge for " + address + "…");
      var body = new URLSearchParams();
      body.set("csrf_token", form.elements["csrf_token"].value);
      body.set("address", address);
      var res = await fetch(button.dataset.challenge, { method: "POST", body: body, credentials: "same-origin" });
      var answer = await res.json();
      if (!res.ok) { say(answer.error || "The challenge was refused."); button.disabled = false; return; }
      say("Sign the message in your wallet…");
      var signature = await eth.request({ method: "personal_sign", params: [answer.message_hex, address] });
      form.elements["address"].value = address;
      form.elements["signature"].value = signature;
      form.submit();
    } catch (e) {
      say("The wallet did not sign: " + (e && e.message ? e.message : e));
      button.disabled = false;
    }
  });
})();
