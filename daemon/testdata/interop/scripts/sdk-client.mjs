// The official TypeScript MCP SDK's client against a running tollgate:
//   node sdk-client.mjs key   URL SECRET_KEY
//   node sdk-client.mjs oauth URL SECRET_KEY
// With "key" it sends the secret key as a bearer token. With "oauth" it
// goes through the SDK's OAuth client: discovery from the tool server's
// 401, dynamic registration, PKCE; this script plays the browser and
// submits the consent form with the secret key, then finishes the flow.
// Either way it lists the tools and calls create_invoice, and prints one
// JSON line: {"tools": [...], "invoice": {...}, "error": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [mode, base, secretKey] = process.argv.slice(2);
const endpoint = new URL("/api/mcp", base);
const redirectUrl = "http://127.0.0.1:47216/callback";

// An in-memory OAuthClientProvider: what a host keeps between runs.
class Provider {
  constructor() {
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.code = undefined;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: "TS SDK host", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  // The browser: open the consent page, fill the form as a person would
  // and follow the answer back to the redirect URI.
  async redirectToAuthorization(url) {
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
    const back = new URL(location);
    this.code = back.searchParams.get("code");
    if (!this.code) throw new Error(`no code: ${location}`);
  }
}

async function connect() {
  const client = new Client({ name: "tollgate-interop", version: "1.0.0" });
  if (mode === "key") {
    const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${secretKey}` } } });
    await client.connect(transport);
    return client;
  }
  const provider = new Provider();
  try {
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    throw new Error("connected without authorization");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await transport.finishAuth(provider.code);
  const authed = new Client({ name: "tollgate-interop", version: "1.0.0" });
  await authed.connect(transport);
  return authed;
}

const client = await connect();
const { tools } = await client.listTools();
const ok = await client.callTool({ name: "create_invoice", arguments: { amount: "9000000", description: `TS SDK (${mode})` } });
const bad = await client.callTool({ name: "create_invoice", arguments: { amount: "9.5", description: "x" } });
console.log(JSON.stringify({
  protocol: client.transport?.protocolVersion,
  tools: tools.map((t) => t.name),
  invoice: ok.isError ? null : ok.structuredContent,
  text: ok.content?.[0]?.text,
  error: bad.isError ? bad.structuredContent : null,
}));
await client.close();
