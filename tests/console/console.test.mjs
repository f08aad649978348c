// Browser tests of the web console of `memory serve`, run by scripts/console-test.sh (which
// installs Chromium and playwright-core and starts the server). Plain node, node's own test
// runner; every check in the browser is also read back through the HTTP API.
//
// Environment: CONSOLE_URL (the server), CONSOLE_KEY / CONSOLE_KEY_ID (a key of its key
// file), CONSOLE_NODE_MODULES (where playwright-core is), CONSOLE_CHROMIUM (the browser),
// CONSOLE_PROFILE (a fresh profile folder), CONSOLE_SCREENSHOTS (a folder, or empty).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";

function need(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run scripts/console-test.sh`);
  }
  return value;
}

const URL_ = need("CONSOLE_URL").replace(/\/$/, "");
const KEY = need("CONSOLE_KEY");
const KEY_ID = need("CONSOLE_KEY_ID");
const require = createRequire(path.join(need("CONSOLE_NODE_MODULES"), "noop.js"));
const { chromium } = require("playwright-core");
const SHOTS = process.env.CONSOLE_SCREENSHOTS || "";
const MEMORY_BIN = need("CONSOLE_MEMORY_BIN");

const context = await chromium.launchPersistentContext(need("CONSOLE_PROFILE"), {
  executablePath: need("CONSOLE_CHROMIUM"),
  headless: true,
  viewport: { width: 1280, height: 860 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
after(async () => {
  await context.close();
});

// Any dialog (an executed alert) or a page error or CSP violation fails the run.
const problems = [];
function watch(page) {
  page.on("dialog", async (d) => {
    problems.push(`a dialog opened: ${d.message()}`);
    await d.dismiss();
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // A page answered with 4xx (a refusal the tests ask for) is logged as a failed load;
    // failed assets are caught below instead.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) {
      problems.push(`console error: ${m.text()}`);
    }
  });
  page.on("response", (r) => {
    if (r.request().resourceType() !== "document" && r.status() >= 400) {
      problems.push(`${r.request().resourceType()} ${r.url()}: ${r.status()}`);
    }
  });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  return page;
}
const page = watch(context.pages()[0] ?? (await context.newPage()));

async function api(method, route, body) {
  const r = await fetch(URL_ + route, {
    method,
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

async function shot(name) {
  if (SHOTS) {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
  }
}

async function text() {
  return page.locator("body").innerText();
}

const state = {};
const SEALED = "Sealed store 7f3c";

test("before sign-in: only the sign-in form, no store name", async () => {
  const made = await api("POST", "/v1/memory_stores", { name: SEALED });
  assert.equal(made.status, 200);
  await page.goto(`${URL_}/console/`);
  await assert.doesNotReject(page.getByLabel("API key").waitFor());
  assert.equal(await page.getByRole("button", { name: "Sign in" }).count(), 1);
  assert.ok(!(await page.content()).includes(SEALED));
  const deep = await page.goto(`${URL_}/console/stores/${made.json.id}`);
  assert.equal(deep.status(), 401);
  assert.ok(!(await page.content()).includes(SEALED));
  const csp = deep.headers()["content-security-policy"];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  await page.goto(`${URL_}/console/`);
  await shot("sign-in.png");
  // The API refuses the anonymous caller too.
  const anon = await fetch(`${URL_}/v1/memory_stores`);
  assert.equal(anon.status, 401);
});

test("a wrong key is refused in words", async () => {
  await page.getByLabel("API key").fill("sk-not-a-key");
  await page.getByRole("button", { name: "Sign in" }).click();
  assert.match(await text(), /That API key is not accepted by this server/);
  assert.ok(!(await page.content()).includes(SEALED));
  const r = await fetch(`${URL_}/v1/memory_stores`, { headers: { "x-api-key": "sk-not-a-key" } });
  assert.equal(r.status, 401);
});

test("sign in with the key", async () => {
  await page.getByLabel("API key").fill(KEY);
  await page.getByRole("button", { name: "Sign in" }).click();
  assert.match(await text(), new RegExp(`Signed in with API key ${KEY_ID}`));
  await assert.doesNotReject(page.getByRole("link", { name: SEALED }).waitFor());
  const cookies = await context.cookies(`${URL_}/console/`);
  const c = cookies.find((c) => c.name === "memory_console");
  assert.ok(c, "the session cookie");
  assert.equal(c.httpOnly, true);
  assert.equal(c.sameSite, "Strict");
  assert.ok(!c.value.includes(KEY), "the cookie is not the key");
});

test("create a store and a memory", async () => {
  await page.getByLabel("Name").fill("Browser notes");
  await page.getByLabel("Description").fill("made by the browser tests");
  await page.getByRole("button", { name: "Create store" }).click();
  assert.match(await text(), /The store was created/);
  state.store = page.url().split("/console/stores/")[1].split("?")[0];
  const got = await api("GET", `/v1/memory_stores/${state.store}`);
  assert.equal(got.json.name, "Browser notes");
  assert.equal(got.json.description, "made by the browser tests");

  await page.getByLabel("Path").fill("/notes/todo.md");
  await page.getByLabel("Content", { exact: true }).fill("first line\n");
  await page.getByRole("button", { name: "Create memory" }).click();
  assert.match(await text(), /The memory was created/);
  state.memory = page.url().split("/memories/")[1].split("?")[0];
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.path, "/notes/todo.md");
  assert.equal(m.json.content, "first line\n");
});

async function save(p, content) {
  await p.getByLabel("Content", { exact: true }).fill(content);
  await p.getByRole("button", { name: "Save" }).click();
}

test("edit it twice: three versions by the key", async () => {
  await save(page, "first line\nsecond line\n");
  assert.match(await text(), /Saved: a new version was written/);
  await save(page, "first line\nsecond line\nthird line\n");
  assert.match(await text(), /Saved: a new version was written/);
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.content, "first line\nsecond line\nthird line\n");
  const vs = await api(
    "GET",
    `/v1/memory_stores/${state.store}/memory_versions?memory_id=${state.memory}&view=full`,
  );
  assert.equal(vs.json.data.length, 3);
  for (const v of vs.json.data) {
    assert.deepEqual(v.created_by, { type: "api_actor", api_key_id: KEY_ID });
  }
  state.versions = vs.json.data.map((v) => v.id); // newest first
  const rows = page.locator("table.versions tbody tr");
  // The live head row, then the three versions.
  assert.equal(await rows.count(), 4);
  const table = page.locator("table.versions");
  assert.equal(await table.getByText(`API key ${KEY_ID}`, { exact: true }).count(), 3);
  for (const op of ["created", "modified"]) {
    assert.ok((await page.locator("table.versions").innerText()).includes(op));
  }
});

test("the store page: a tree with counts, sizes and the limit", async () => {
  await page.getByRole("link", { name: "Browser notes" }).first().click();
  await assert.doesNotReject(page.getByRole("link", { name: "/notes/todo.md" }).waitFor());
  const body = await text();
  assert.match(body, /notes\//);
  assert.match(body, /Memories: 1 of 2,000/);
  assert.match(body, /1 memory, 34 B/);
  assert.equal(await page.locator("meter#limit").getAttribute("value"), "1");
  await shot("store-tree.png");
  // The prefix filter.
  await page.getByLabel("Folder prefix").fill("/other/");
  await page.getByRole("button", { name: "Filter" }).click();
  assert.equal(await page.getByRole("link", { name: "/notes/todo.md" }).count(), 0);
  await page.getByLabel("Folder prefix").fill("/notes/");
  await page.getByRole("button", { name: "Filter" }).click();
  assert.equal(await page.getByRole("link", { name: "/notes/todo.md" }).count(), 1);
  const listed = await api(
    "GET",
    `/v1/memory_stores/${state.store}/memories?path_prefix=/notes/`,
  );
  assert.equal(listed.json.data.length, 1);
});

test("diff two versions", async () => {
  const [newest, middle, oldest] = state.versions;
  await page.goto(`${URL_}/console/stores/${state.store}/memories/${state.memory}`);
  await page.getByRole("radio", { name: `From ${oldest}` }).check();
  await page.getByRole("radio", { name: `To ${middle}` }).check();
  await shot("memory-history.png");
  await page.getByRole("button", { name: "Show diff" }).click();
  const diff = await page.locator("pre.diff").innerText();
  assert.match(diff, /^\+ second line$/m);
  assert.match(diff, /^ {2}first line$/m);
  assert.ok(!diff.includes("third line"));
  await shot("diff.png");
  const a = await api("GET", `/v1/memory_stores/${state.store}/memory_versions/${oldest}`);
  const b = await api("GET", `/v1/memory_stores/${state.store}/memory_versions/${middle}`);
  assert.equal(a.json.content, "first line\n");
  assert.equal(b.json.content, "first line\nsecond line\n");
  state.newest = newest;
});

test("redact the oldest; the head is refused with the API's reason", async () => {
  const [newest, , oldest] = state.versions;
  await page.goto(`${URL_}/console/stores/${state.store}/versions/${oldest}`);
  await page.getByLabel("I understand that redaction cannot be undone").check();
  await page.getByRole("button", { name: "Redact" }).click();
  assert.match(await text(), /The version was redacted/);
  const v = await api("GET", `/v1/memory_stores/${state.store}/memory_versions/${oldest}`);
  assert.equal(v.json.content, null);
  assert.ok(v.json.redacted_at);
  assert.deepEqual(v.json.redacted_by, { type: "api_actor", api_key_id: KEY_ID });

  await page.goto(`${URL_}/console/stores/${state.store}/versions/${newest}`);
  await page.getByLabel("I understand that redaction cannot be undone").check();
  await page.getByRole("button", { name: "Redact" }).click();
  const body = await text();
  assert.match(body, /This version cannot be redacted: it is the memory's current content/);
  assert.match(body, /is the current version of memory/);
  assert.ok(!body.includes("conflict_error"));
  const head = await api("GET", `/v1/memory_stores/${state.store}/memory_versions/${newest}`);
  assert.equal(head.json.redacted_at, null);
});

test("restore another version", async () => {
  const [, middle] = state.versions;
  await page.goto(`${URL_}/console/stores/${state.store}/versions/${middle}`);
  await page.getByRole("button", { name: "Restore this version" }).click();
  assert.match(await text(), /The version was restored/);
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.content, "first line\nsecond line\n");
  const vs = await api(
    "GET",
    `/v1/memory_stores/${state.store}/memory_versions?memory_id=${state.memory}`,
  );
  assert.equal(vs.json.data.length, 4);
  assert.equal(vs.json.data[0].operation, "modified");
});

test("a stale save is refused in words and shows both versions", async () => {
  const memoryUrl = `${URL_}/console/stores/${state.store}/memories/${state.memory}`;
  const other = watch(await context.newPage());
  await page.goto(memoryUrl);
  await other.goto(memoryUrl);
  await save(other, "saved by the other page\n");
  assert.match(await other.locator("body").innerText(), /Saved/);
  await other.close();
  await save(page, "saved by this page\n");
  const body = await text();
  assert.match(body, /this memory changed since it was loaded/);
  assert.equal(await page.locator("#current-content").innerText(), "saved by the other page\n");
  assert.equal(await page.locator("#your-content").innerText(), "saved by this page\n");
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.content, "saved by the other page\n");
});

test("a memory of markup is shown as text", async () => {
  const xss = "<img src=x onerror=alert(1)>";
  await page.goto(`${URL_}/console/stores/${state.store}`);
  await page.getByLabel("Path").fill("/xss.md");
  await page.getByLabel("Content", { exact: true }).fill(xss);
  await page.getByRole("button", { name: "Create memory" }).click();
  assert.equal(await page.locator("#memory-content").innerText(), xss);
  assert.equal(await page.locator("img").count(), 0);
  assert.equal(await page.getByLabel("Content", { exact: true }).inputValue(), xss);
  const listed = await api("GET", `/v1/memory_stores/${state.store}/memories?view=full`);
  const stored = listed.json.data.find((m) => m.path === "/xss.md");
  assert.equal(stored.content, xss);
});

test("export the store as an archive", async () => {
  const r = await context.request.get(`${URL_}/console/stores/${state.store}/export`);
  assert.equal(r.status(), 200);
  const lines = (await r.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].format, "memory-archive");
  const paths = lines.filter((l) => l.type === "file").map((l) => l.path).sort();
  assert.deepEqual(paths, ["/memories/notes/todo.md", "/memories/xss.md"]);
  assert.deepEqual(lines.at(-1).type, "end");
  const all = await api("GET", `/v1/memory_stores/${state.store}/memories`);
  assert.equal(all.json.data.length, 2);
  state.archive = await r.text();
});

test("the console's archive is memory export's, and memory import reads it", async () => {
  const env = { ...process.env, MEMORY_STORE_API_KEY: KEY };
  const cli = execFileSync(
    MEMORY_BIN,
    ["export", "--quiet", "--store", `store+${URL_}#${state.store}`],
    { env, encoding: "utf8" },
  );
  const files = (text) =>
    text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === "file")
      .map(({ path, size, sha256, encoding, data }) => ({ path, size, sha256, encoding, data }))
      .sort((a, b) => (a.path < b.path ? -1 : 1));
  assert.deepEqual(files(state.archive), files(cli));
  const copy = await api("POST", "/v1/memory_stores", { name: "Imported by the CLI" });
  execFileSync(MEMORY_BIN, ["import", "--quiet", "-", "--store", `store+${URL_}#${copy.json.id}`], {
    env,
    input: state.archive,
  });
  const listed = await api("GET", `/v1/memory_stores/${copy.json.id}/memories?view=full`);
  const got = listed.json.data.map((m) => [m.path, m.content]);
  assert.deepEqual(got, [
    ["/notes/todo.md", "saved by the other page\n"],
    ["/xss.md", "<img src=x onerror=alert(1)>"],
  ]);
});

test("a result page has its heading and a breadcrumb back", async () => {
  await page.goto(`${URL_}/console/stores/${state.store}`);
  await page.getByLabel("Archive (JSON Lines)").fill(state.archive);
  await page.getByLabel("Replace memories that already exist").check();
  await page.getByRole("button", { name: "Import" }).click();
  assert.equal(await page.getByRole("heading", { level: 1, name: "Imported" }).count(), 1);
  assert.match(await text(), /Imported 2 memories/);
  const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
  assert.equal(await crumbs.getByRole("link", { name: "Stores" }).count(), 1);
  await crumbs.getByRole("link", { name: `Store ${state.store}` }).click();
  assert.equal(new URL(page.url()).pathname, `/console/stores/${state.store}`);
  assert.equal(await page.getByRole("heading", { level: 1, name: "Browser notes" }).count(), 1);
  // A page that is not found says so in its heading, with the way back.
  const missing = await page.goto(`${URL_}/console/stores/${state.store}/memories/mem_0000000000000000000000nope`);
  assert.equal(missing.status(), 404);
  assert.equal(await page.getByRole("heading", { level: 1, name: "Not found" }).count(), 1);
  const trail = page.getByRole("navigation", { name: "Breadcrumb" });
  assert.equal(await trail.getByRole("link", { name: `Store ${state.store}` }).count(), 1);
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.content, "saved by the other page\n");
});

test("times read as how long ago, the exact time on hover; ids do not wrap", async () => {
  await page.goto(`${URL_}/console/stores/${state.store}/memories/${state.memory}`);
  const times = page.locator("table.versions td time");
  assert.ok((await times.count()) >= 4);
  assert.match(await times.first().innerText(), /^(just now|\d+ (seconds?|minutes?) ago)$/);
  assert.match(await times.first().getAttribute("title"), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  assert.match(await times.first().getAttribute("datetime"), /^\d{4}-\d\d-\d\dT.*Z$/);
  // Narrow window: an id cell stays one line (the table scrolls instead).
  await page.setViewportSize({ width: 420, height: 860 });
  const cell = page.locator("table.versions td.id").first();
  const box = await cell.locator("a").boundingBox();
  const line = await cell.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 20);
  assert.ok(box.height < line * 1.8, `the id wrapped: ${box.height}px for a ${line}px line`);
  await page.setViewportSize({ width: 1280, height: 860 });
});

test("archive the store: its pages offer only what it allows", async () => {
  await page.goto(`${URL_}/console/stores/${state.store}`);
  assert.match(await text(), /Archiving is one-way/);
  await page.getByLabel("I understand that archiving cannot be undone").check();
  await page.getByRole("button", { name: "Archive store" }).click();
  assert.match(await text(), /The store is archived/);
  const s = await api("GET", `/v1/memory_stores/${state.store}`);
  assert.ok(s.json.archived_at);

  // The store page: no create, no import, no archive; reading, export and delete stay.
  for (const name of ["Create memory", "Import", "Archive store"]) {
    assert.equal(await page.getByRole("button", { name }).count(), 0, name);
  }
  assert.equal(await page.getByRole("button", { name: "Delete store" }).count(), 1);
  assert.equal(await page.getByRole("link", { name: "Export archive" }).count(), 1);
  assert.equal(await page.getByRole("link", { name: "/notes/todo.md" }).count(), 1);
  // The memory page: no save, no rename; delete stays.
  await page.goto(`${URL_}/console/stores/${state.store}/memories/${state.memory}`);
  for (const name of ["Save", "Rename"]) {
    assert.equal(await page.getByRole("button", { name }).count(), 0, name);
  }
  assert.equal(await page.getByRole("button", { name: "Delete memory" }).count(), 1);
  assert.equal(await page.locator("textarea").count(), 0);
  // A version page: no restore; redaction stays.
  await page.goto(`${URL_}/console/stores/${state.store}/versions/${state.versions[1]}`);
  assert.equal(await page.getByRole("button", { name: "Restore this version" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Redact" }).count(), 1);
  // And the API still refuses what the pages no longer offer.
  const late = await api("POST", `/v1/memory_stores/${state.store}/memories`, {
    path: "/late.md",
    content: "too late",
  });
  assert.equal(late.status, 400);
  assert.equal(late.json.error.reason, "store_archived");
  const m = await api("GET", `/v1/memory_stores/${state.store}/memories/${state.memory}`);
  assert.equal(m.json.content, "saved by the other page\n");
  const all = await api("GET", `/v1/memory_stores/${state.store}/memories`);
  assert.equal(all.json.data.length, 2);
  // Archived stores are listed on request.
  await page.goto(`${URL_}/console/`);
  assert.equal(await page.getByRole("link", { name: "Browser notes" }).count(), 0);
  await page.getByLabel("Show archived stores").check();
  await page.getByRole("button", { name: "Show" }).click();
  assert.equal(await page.getByRole("link", { name: "Browser notes" }).count(), 1);
});

test("delete the store by typing its name", async () => {
  await page.goto(`${URL_}/console/stores/${state.store}`);
  await page.getByLabel("Type the store's name to confirm").fill("browser notes");
  await page.getByRole("button", { name: "Delete store" }).click();
  assert.match(await text(), /Nothing was deleted: the name you typed is not the store's name/);
  assert.equal((await api("GET", `/v1/memory_stores/${state.store}`)).status, 200);
  await page.goto(`${URL_}/console/stores/${state.store}`);
  await page.getByLabel("Type the store's name to confirm").fill("Browser notes");
  await page.getByRole("button", { name: "Delete store" }).click();
  assert.match(await text(), /The store was deleted, with all its memories and versions/);
  assert.equal((await api("GET", `/v1/memory_stores/${state.store}`)).status, 404);
  const gone = await page.goto(`${URL_}/console/stores/${state.store}`);
  assert.equal(gone.status(), 404);
  assert.match(await text(), /Not found\./);
});

test("sign out: the stores are gone again", async () => {
  await page.getByRole("button", { name: "Sign out" }).click();
  assert.match(await text(), /You are signed out/);
  assert.ok(!(await page.content()).includes(SEALED));
  await page.goto(`${URL_}/console/stores/${state.store}`);
  assert.ok(!(await page.content()).includes("Browser notes"));
});

test("nothing executed, no page errors, no CSP violations", () => {
  assert.deepEqual(problems, []);
});
