import assert from "node:assert/strict";
import { join } from "node:path";
import { contentTypeOf, resolveUnder, serveDirectory } from "./static_server.ts";

/** A served directory `www/` with a sibling `secret.txt` that must stay unreachable. */
async function fixture(): Promise<{ dir: string; www: string }> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-static-" });
  const www = join(dir, "www");
  await Deno.mkdir(join(www, "sub"), { recursive: true });
  await Deno.writeTextFile(join(dir, "secret.txt"), "TOP SECRET");
  await Deno.writeTextFile(join(www, "index.html"), "<!doctype html><title>root</title>");
  await Deno.writeTextFile(join(www, "sub", "index.html"), "<title>sub</title>");
  await Deno.writeTextFile(join(www, "app.js"), "export const x = 1;");
  await Deno.writeFile(join(www, "k.wasm"), new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
  await Deno.writeTextFile(join(www, "data.json"), "{}");
  await Deno.writeFile(join(www, "w.safetensors"), new Uint8Array(16));
  await Deno.writeTextFile(join(www, "a b.txt"), "spaced");
  await Deno.symlink(join(dir, "secret.txt"), join(www, "link.txt"));
  return { dir, www };
}

/** Sends `GET <target>` byte for byte (fetch would normalise `..` away) and returns the status. */
async function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      ),
    );
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = new TextDecoder().decode(
      chunks.reduce((a, c) => {
        const out = new Uint8Array(a.length + c.length);
        out.set(a);
        out.set(c, a.length);
        return out;
      }, new Uint8Array()),
    );
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? NaN);
    return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    conn.close();
  }
}

Deno.test("serveDirectory: isolation headers, content types, index.html, HEAD, 404 and 405", async () => {
  const { dir, www } = await fixture();
  try {
    await using server = await serveDirectory(www);
    assert.ok(server.port > 0);
    assert.equal(server.url, `http://127.0.0.1:${server.port}/`);
    const expectType: [string, string][] = [
      ["app.js", "text/javascript; charset=utf-8"],
      ["k.wasm", "application/wasm"],
      ["data.json", "application/json"],
      ["w.safetensors", "application/octet-stream"],
      ["", "text/html; charset=utf-8"],
      ["sub/", "text/html; charset=utf-8"],
      ["a%20b.txt", "text/plain; charset=utf-8"],
    ];
    for (const [path, type] of expectType) {
      const res = await fetch(server.url + path);
      const body = await res.bytes();
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("content-type"), type, path);
      assert.equal(res.headers.get("content-length"), String(body.length), path);
      assert.equal(res.headers.get("cross-origin-opener-policy"), "same-origin", path);
      assert.equal(res.headers.get("cross-origin-embedder-policy"), "require-corp", path);
      assert.equal(res.headers.get("cache-control"), "no-store", path);
    }
    const sub = await fetch(server.url + "sub", { redirect: "manual" });
    await sub.body?.cancel();
    assert.equal(sub.status, 301);
    assert.equal(sub.headers.get("location"), "/sub/");
    const head = await fetch(server.url + "app.js", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), "19");
    assert.equal(await head.text(), "");
    const missing = await fetch(server.url + "nope.js");
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("cross-origin-embedder-policy"), "require-corp");
    await missing.body?.cancel();
    const post = await fetch(server.url + "app.js", { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    await post.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveDirectory: no directory traversal (raw .., encoded .., backslashes, NUL, symlinks)", async () => {
  const { dir, www } = await fixture();
  try {
    await using server = await serveDirectory(www);
    const attempts = [
      "/../secret.txt",
      "/sub/../../secret.txt",
      "/%2e%2e/secret.txt",
      "/..%2fsecret.txt",
      "/..%2F..%2Fsecret.txt",
      "/sub/%2e%2e%2f%2e%2e%2fsecret.txt",
      "/..%5csecret.txt",
      "/%00/../secret.txt",
      "/app.js%00.html",
      "/%E0%A4%A",
      "/link.txt",
      `/${"%2e%2e/".repeat(20)}etc/passwd`,
    ];
    for (const target of attempts) {
      const { status, body } = await rawGet(server.port, target);
      assert.ok(status === 404 || status === 400, `${target}: status ${status}`);
      assert.ok(!body.includes("TOP SECRET"), `${target} leaked the file outside the root`);
    }
    // The same file is served under its legitimate name.
    const ok = await rawGet(server.port, "/app.js");
    assert.equal(ok.status, 200);
    assert.match(ok.body, /export const x = 1;/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveDirectory: paths longer than maxPathLength get 414", async () => {
  const { dir, www } = await fixture();
  try {
    await using server = await serveDirectory(www, { maxPathLength: 64 });
    const long = await fetch(server.url + "a".repeat(100));
    assert.equal(long.status, 414);
    assert.match(await long.text(), /longer than 64 characters/);
    const fine = await fetch(server.url + "app.js");
    assert.equal(fine.status, 200);
    await fine.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveDirectory: bad arguments fail naming the value and the fix", async () => {
  await assert.rejects(
    () => serveDirectory("/surely/not/a/dir"),
    /serveDirectory: cannot serve "\/surely\/not\/a\/dir": .*pass an existing directory/,
  );
  await assert.rejects(
    () => serveDirectory(".", { maxPathLength: 0 }),
    /maxPathLength must be an integer >= 1, got 0/,
  );
  await assert.rejects(() => serveDirectory(".", { port: 70000 }), /port must be .* got 70000/);
  await assert.rejects(
    () => serveDirectory(".", { hostname: "a b" }),
    /hostname must be an address or host name, got "a b"/,
  );
});

Deno.test("serveDirectory: another hostname is bound and named in the URL (IPv6 in brackets)", async () => {
  const { dir, www } = await fixture();
  try {
    for (const [hostname, host] of [["localhost", "localhost"], ["::1", "[::1]"]] as const) {
      let server;
      try {
        server = await serveDirectory(www, { hostname });
      } catch (e) {
        console.warn(`skipping ${hostname}: ${(e as Error).message}`); // no IPv6 here
        continue;
      }
      await using _ = server;
      assert.equal(server.hostname, hostname);
      assert.equal(server.url, `http://${host}:${server.port}/`);
      const res = await fetch(server.url);
      assert.match(await res.text(), /<title>root<\/title>/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolveUnder and contentTypeOf: pure path and type rules", () => {
  assert.equal(resolveUnder("/srv", "/"), "/srv");
  assert.equal(resolveUnder("/srv", "/./a/./b.js"), "/srv/a/b.js");
  assert.equal(resolveUnder("/srv", "/a/../b.js"), null);
  assert.equal(resolveUnder("/srv", "/a%5Cb"), null);
  assert.equal(resolveUnder("/srv", "/%ZZ"), null);
  assert.equal(contentTypeOf("x.html"), "text/html; charset=utf-8");
  assert.equal(contentTypeOf("x.unknown"), "application/octet-stream");
  assert.equal(contentTypeOf("noext"), "application/octet-stream");
});
