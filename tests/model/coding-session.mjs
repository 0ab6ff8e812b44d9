// A deterministic coding-agent session for the real-model tests: a user and an agent fixing a
// small invoicing service, turn after turn, with tool calls (file reads, greps, test runs) and
// their outputs. Varied enough that a summary has real content to keep (paths, commands, errors,
// decisions), and every message unique (the store deduplicates identical messages). Not a test.

const FILES = [
  ["src/invoice/total.rs", "pub fn total(lines: &[Line]) -> Money {\n    lines.iter().map(|l| l.unit_price * l.quantity).sum()\n}\n\npub fn total_with_tax(lines: &[Line], rate: Rate) -> Money {\n    let net = total(lines);\n    net + net * rate\n}"],
  ["src/invoice/rounding.rs", "/// Rounds half away from zero to the currency's minor unit.\npub fn round_minor(amount: Decimal, minor_digits: u32) -> Decimal {\n    amount.round_dp_with_strategy(minor_digits, RoundingStrategy::MidpointAwayFromZero)\n}"],
  ["src/api/handlers.rs", "async fn create_invoice(State(db): State<Db>, Json(req): Json<NewInvoice>) -> Result<Json<Invoice>, ApiError> {\n    let customer = db.customer(req.customer_id).await?.ok_or(ApiError::NotFound(\"customer\"))?;\n    let invoice = Invoice::draft(&customer, req.lines)?;\n    db.insert_invoice(&invoice).await?;\n    Ok(Json(invoice))\n}"],
  ["migrations/0007_invoice_due_date.sql", "ALTER TABLE invoices ADD COLUMN due_date DATE;\nUPDATE invoices SET due_date = issued_on + INTERVAL '30 days' WHERE due_date IS NULL;\nALTER TABLE invoices ALTER COLUMN due_date SET NOT NULL;"],
  ["src/pdf/render.rs", "pub fn render(invoice: &Invoice, template: &Template) -> Result<Vec<u8>, RenderError> {\n    let mut doc = template.instantiate()?;\n    doc.set_field(\"number\", &invoice.number)?;\n    doc.set_field(\"due\", &invoice.due_date.format(\"%d %b %Y\").to_string())?;\n    doc.finish()\n}"],
  ["Cargo.toml", "[package]\nname = \"invoicer\"\nversion = \"0.4.2\"\nedition = \"2021\"\n\n[dependencies]\naxum = \"0.7\"\nrust_decimal = \"1.36\"\nsqlx = { version = \"0.8\", features = [\"postgres\", \"runtime-tokio\"] }"],
];

const COMMANDS = [
  ["cargo test -p invoicer invoice::", "running 14 tests\ntest invoice::total::tests::empty_invoice_is_zero ... ok\ntest invoice::total::tests::tax_is_applied_once ... FAILED\ntest invoice::rounding::tests::half_cent_rounds_up ... ok\n\nfailures:\n---- invoice::total::tests::tax_is_applied_once stdout ----\nthread 'invoice::total::tests::tax_is_applied_once' panicked at src/invoice/total.rs:41:9:\nassertion `left == right` failed\n  left: 121.00\n right: 110.00\n\ntest result: FAILED. 13 passed; 1 failed"],
  ["rg -n \"total_with_tax\" src", "src/invoice/total.rs:6:pub fn total_with_tax(lines: &[Line], rate: Rate) -> Money {\nsrc/api/handlers.rs:88:    let gross = total_with_tax(&invoice.lines, customer.tax_rate);\nsrc/pdf/render.rs:52:    let gross = total_with_tax(&invoice.lines, invoice.tax_rate);\nsrc/invoice/credit_note.rs:19:    total_with_tax(&note.lines, note.tax_rate).negate()"],
  ["sqlx migrate run", "Applied 6/migrate add customer vat id (12.4ms)\nerror: while executing migration 7: error returned from database: column \"due_date\" of relation \"invoices\" contains null values"],
  ["cargo clippy --all-targets", "warning: this `if` has identical blocks\n  --> src/pdf/render.rs:77:5\nwarning: redundant clone\n  --> src/api/handlers.rs:102:30\nwarning: `invoicer` (lib) generated 2 warnings"],
  ["curl -s -X POST localhost:3000/invoices -d @fixtures/invoice.json", "{\"error\":\"customer 4182 not found\",\"status\":404}"],
  ["git log --oneline -5", "9f2c1ab fix rounding of half cents\n41d07e2 add due dates to invoices\nc88e310 render invoice PDFs with the new template\n2b7a9d4 credit notes reuse total_with_tax\n7e01f55 axum 0.7"],
];

const ASKS = [
  "The tax total on invoice {n} is wrong: a 100.00 net invoice at 10% shows 121.00. Find out why.",
  "Where else is total_with_tax called? I want every caller checked before we change it (ticket INV-{n}).",
  "Migration 0007 fails on staging. Make it safe for old invoices that have no issue date.",
  "Please clean up the clippy warnings in the PDF renderer, but do not change the template fields.",
  "The API returns 404 for customer 4182 although the customer exists. Check the handler, request {n}.",
  "Summarize what changed in the last commits so I can write the release notes for 0.4.{n}.",
  "Rounding: half cents must round away from zero, as the accountant asked in mail #{n}. Verify it.",
  "Decide whether credit notes should negate the gross or the net amount; we need one rule, case {n}.",
];

const REPLIES = [
  "The test fails because tax is applied twice: total_with_tax adds net * rate, and the handler multiplies by (1 + rate) again on line 88. I will keep total_with_tax as the single place that applies tax and remove the second multiplication.",
  "There are four callers: the create handler, the PDF renderer, credit notes and the tests. The PDF renderer uses invoice.tax_rate while the handler uses customer.tax_rate, which disagree after a customer's rate changes; the invoice's own rate is the one that must win.",
  "The migration sets due_date from issued_on, but 312 old rows have issued_on NULL, so the NOT NULL step fails. I changed it to fall back to created_at::date for those rows and kept the 30-day term.",
  "Both warnings are fixed: the duplicated if-branch in render.rs is merged and the redundant clone in handlers.rs is gone. Template fields number and due are unchanged, and cargo clippy is clean.",
  "The handler looked the customer up in the archived schema because the Db pool still pointed at search_path=archive. I set the search path per connection; POST /invoices now answers 201 for customer 4182.",
  "Since 0.4.1: half-cent rounding fixed, due dates added (migration 0007), PDFs use the new template, credit notes reuse total_with_tax, and axum moved to 0.7. No API change apart from the new due_date field.",
];

/** One turn `i` (0-based): the user's ask, a tool call with its output, and the agent's answer. */
export function turnMessages(i, clock) {
  const n = 100 + i;
  const ask = ASKS[i % ASKS.length].replace("{n}", String(n));
  const useFile = i % 2 === 0;
  const [target, output] = useFile ? FILES[(i / 2) % FILES.length] : COMMANDS[((i - 1) / 2) % COMMANDS.length];
  const id = `call_${n}`;
  const toolName = useFile ? "read" : "bash";
  const args = useFile ? { path: target } : { command: target };
  const shown = useFile ? `// ${target} (turn ${n})\n${output}` : `$ ${target}   # run ${n}\n${output}`;
  const reply = `${REPLIES[i % REPLIES.length]} (turn ${n})`;
  return [
    { role: "user", content: `${ask} (turn ${n})`, timestamp: clock + 0 },
    { role: "assistant", content: [{ type: "toolCall", id, name: toolName, arguments: args }], api: "openai-completions", provider: "mock", model: "agent", usage: { input: 1, output: 1 }, stopReason: "toolUse", timestamp: clock + 1 },
    { role: "toolResult", toolCallId: id, toolName, content: [{ type: "text", text: shown }], isError: false, timestamp: clock + 2 },
    { role: "assistant", content: [{ type: "text", text: reply }], api: "openai-completions", provider: "mock", model: "agent", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock + 3 },
  ];
}
