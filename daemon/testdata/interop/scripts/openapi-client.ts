// A typed client generated from the daemon's /openapi.json by
// openapi-typescript (into ../out/api.d.ts), used through openapi-fetch:
// it creates an invoice and finds it in the list.
//   node ../out/openapi-client.js URL SECRET_KEY
import createClient from "openapi-fetch";
import type { paths } from "../out/api.js";

// Node's own, without @types/node.
declare const process: { argv: string[] };

const [base, key] = process.argv.slice(2);
const api = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });

const created = await api.POST("/v1/invoices", { body: { amount: "4200000", description: "openapi-fetch" } });
if (!created.data) throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
const invoice = created.data;

const listed = await api.GET("/v1/invoices", { params: { query: { limit: 5 } } });
if (!listed.data) throw new Error(`list: ${listed.response.status} ${JSON.stringify(listed.error)}`);

const refused = await api.POST("/v1/invoices", { body: { amount: "1", description: "" } });

console.log(JSON.stringify({
  status: created.response.status,
  invoice: { id: invoice.id, amount: invoice.amount, status: invoice.status, checkout_url: invoice.checkout_url },
  listed: listed.data.data.map((i) => i.id),
  has_more: listed.data.has_more,
  refused: refused.error?.error.code,
}));
