// Loaded with `node --import` before the MCP conformance suite, which has
// no option for a credential: it adds "Authorization: Bearer $MCP_BEARER"
// to every request the process sends to $MCP_BEARER_ORIGIN, and to no
// other origin. Both the suite's SDK client (fetch) and its raw requests
// (undici's request) go through the global dispatcher set here, so the
// tool server sees a credential as from any host; it is never weakened for
// the suite.
import { Agent, setGlobalDispatcher } from "undici";

const token = process.env.MCP_BEARER;
const origin = process.env.MCP_BEARER_ORIGIN;
if (!token || !origin) throw new Error("bearer-preload: set MCP_BEARER and MCP_BEARER_ORIGIN");
const target = new URL(origin).origin;

function withBearer(headers) {
  const value = `Bearer ${token}`;
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) return [...headers, "authorization", value];
  if (typeof headers[Symbol.iterator] === "function") return [...[...headers].flat(), "authorization", value];
  return { ...headers, authorization: value };
}

setGlobalDispatcher(new Agent().compose((dispatch) => (opts, handler) => {
  if (opts.origin && new URL(String(opts.origin)).origin === target) {
    opts = { ...opts, headers: withBearer(opts.headers) };
  }
  return dispatch(opts, handler);
}));
