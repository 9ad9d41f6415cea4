// The MCP TypeScript SDK's v2 client (@modelcontextprotocol/client), which
// speaks the 2026-07-28 revision, against a running tollgate:
//   node client-v2.mjs key   URL SECRET_KEY
//   node client-v2.mjs oauth URL SECRET_KEY CLIENT_ID_URL
// It negotiates the protocol version with server/discover ("auto": the
// newest both sides have, falling back to initialize for an older server).
// With "key" it sends the secret key as a bearer token. With "oauth" it
// goes through the SDK's OAuth client with a URL for a client id: the
// authorization server fetches the client's metadata document from
// CLIENT_ID_URL (which the test serves) instead of registering it. This
// script plays the browser and submits the consent form with the secret
// key, then finishes the flow with the callback's code and iss.
// Either way it lists the tools, calls create_invoice once well and once
// with a bad amount, and prints one JSON line:
// {"protocol": "...", "tools": [...], "invoice": {...}, "error": {...}}.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const [mode, base, secretKey, clientIdUrl] = process.argv.slice(2);
const endpoint = new URL("/api/mcp", base);
const redirectUrl = "http://127.0.0.1:47217/callback";

// An in-memory OAuthClientProvider: what a host keeps between runs.
class Provider {
  constructor() {
    this.clientMetadataUrl = clientIdUrl;
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.callback = undefined;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: "TS SDK v2 host", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  // Never registered: the client id is the metadata document's URL, which
  // the SDK uses when the server advertises client_id_metadata_document_supported.
  clientInformation() { return this.info; }
  saveClientInformation(info) {
    if (info.client_id !== clientIdUrl) throw new Error(`the SDK registered (${info.client_id}) instead of using the metadata document URL`);
    this.info = info;
  }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  // The browser: open the consent page, fill the form as a person would
  // and follow the answer back to the redirect URI.
  async redirectToAuthorization(url) {
    if (url.searchParams.get("client_id") !== clientIdUrl) throw new Error(`authorization URL without the document's client id: ${url}`);
    const page = await fetch(url, { redirect: "manual" });
    const html = await page.text();
    if (page.status !== 200) throw new Error(`consent page: ${page.status} ${html}`);
    const cookie = (page.headers.get("set-cookie") || "").split(";")[0];
    const form = new URLSearchParams();
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      form.set(m[1], m[2].replaceAll("&amp;", "&").replaceAll("&#34;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">"));
    }
    form.set("secret_key", secretKey);
    form.set("access", "write");
    form.set("decision", "allow");
    const action = new URL("/oauth/authorize", url);
    const answer = await fetch(action, {
      method: "POST", redirect: "manual", body: form,
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: action.origin, "Sec-Fetch-Site": "same-origin" },
    });
    const location = answer.headers.get("location");
    if (!location || !location.startsWith(redirectUrl)) throw new Error(`consent answer: ${answer.status} ${await answer.text()}`);
    this.callback = new URL(location).searchParams;
  }
}

const options = { versionNegotiation: { mode: "auto" } };

async function connect() {
  const client = new Client({ name: "tollgate-interop-v2", version: "1.0.0" }, options);
  if (mode === "key") {
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${secretKey}` } } }));
    return client;
  }
  const provider = new Provider();
  try {
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    throw new Error("connected without authorization");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  if (!provider.callback) throw new Error("the SDK never sent the browser to the consent page");
  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await transport.finishAuth(provider.callback);
  const authed = new Client({ name: "tollgate-interop-v2", version: "1.0.0" }, options);
  await authed.connect(transport);
  return authed;
}

const client = await connect();
const { tools } = await client.listTools();
const ok = await client.callTool({ name: "create_invoice", arguments: { amount: "9000000", description: `TS SDK v2 (${mode})` } });
const bad = await client.callTool({ name: "create_invoice", arguments: { amount: "9.5", description: "x" } });
console.log(JSON.stringify({
  protocol: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra(),
  tools: tools.map((t) => t.name),
  invoice: ok.isError ? null : ok.structuredContent,
  error: bad.isError ? bad.structuredContent : null,
}));
await client.close();
