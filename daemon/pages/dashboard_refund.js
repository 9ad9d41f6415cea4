// A live refund: the browser wallet (EIP-1193) of the settlement wallet
// signs the refund's authorization (eth_signTypedData_v4) and the
// signature is posted with the confirmation.
(function () {
  var button = document.getElementById("refund-sign");
  var form = document.getElementById("refund-form");
  var status = document.getElementById("refund-status");
  if (!button || !form) return;
  function say(text) { status.textContent = text; }
  button.addEventListener("click", async function () {
    var eth = window.ethereum;
    if (!eth) { say("No browser wallet found: sign the typed data below with the settlement wallet elsewhere and paste the signature."); return; }
    button.disabled = true;
    try {
      var wallet = button.dataset.wallet.toLowerCase();
      var accounts = await eth.request({ method: "eth_requestAccounts" });
      var account = accounts.find(function (a) { return a.toLowerCase() === wallet; });
      if (!account) {
        say("Connect the settlement wallet " + button.dataset.wallet + " to sign: the browser wallet offered " + accounts.join(", ") + ".");
        button.disabled = false;
        return;
      }
      say("Sign the refund in your wallet…");
      var signature = await eth.request({ method: "eth_signTypedData_v4", params: [account, button.dataset.typedData] });
      form.elements["signature"].value = signature;
      say("Sending the refund…");
      form.submit();
    } catch (e) {
      say("The wallet did not sign: " + (e && e.message ? e.message : e));
      button.disabled = false;
    }
  });
})();
