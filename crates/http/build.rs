//! Embeds the live web view (`src/web.rs`): copies the page's own files from `web/` into
//! `OUT_DIR/web/`, with the graph layout library that `npm ci` vendors into
//! `web/node_modules` (run by `scripts/setup.sh`). Without the library the build still
//! succeeds: a stand-in script takes its place and makes the page say what to run.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// The page's own files, embedded as they are.
const PAGE_FILES: &[&str] = &["index.html", "app.js", "style.css"];
/// The layout library's package, inside `web/`.
const LIBRARY_DIR: &str = "node_modules/@dagrejs/dagre";
/// Its self-contained minified browser build (it defines the global `dagre`), inside the package.
const LIBRARY_FILE: &str = "dist/dagre.min.js";
/// Its licence notice, inside the package.
const LIBRARY_LICENCE: &str = "dist/dagre.min.js.LEGAL.txt";
/// The script served in the library's place when it was not vendored.
const STAND_IN: &str = "window.SLUICE_LAYOUT_MISSING = \
    \"layout library missing: run scripts/setup.sh, then rebuild sluice\";\n";

fn main() {
    let web =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("web");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("web");
    // A directory is watched as a whole, node_modules included, so that running `npm ci`
    // after a build embeds the library at the next one.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=web");

    fs::create_dir_all(&out).unwrap_or_else(|e| panic!("cannot create {}: {e}", out.display()));
    for name in PAGE_FILES {
        let from = web.join(name);
        let bytes = fs::read(&from)
            .unwrap_or_else(|e| panic!("web view file {} unreadable: {e}", from.display()));
        write(&out.join(name), &bytes);
    }
    let library = match vendored_library(&web.join(LIBRARY_DIR)) {
        Ok(text) => text,
        Err(why) => {
            println!(
                "cargo:warning=web view built without its layout library ({why}); \
                 run scripts/setup.sh to vendor it"
            );
            STAND_IN.to_string()
        }
    };
    write(&out.join("dagre.min.js"), library.as_bytes());
}

/// The library's minified build, preceded by its version and licence notice, without the
/// source-map reference (the map is not served).
fn vendored_library(package: &Path) -> Result<String, String> {
    let read = |name: &str| {
        let path = package.join(name);
        fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let code = read(LIBRARY_FILE)?;
    if !code.contains("dagre") {
        return Err(format!("{LIBRARY_FILE} does not define dagre"));
    }
    let version = read("package.json")
        .ok()
        .and_then(|p| json_string_field(&p, "version"));
    let mut text = format!(
        "/*! @dagrejs/dagre {} (MIT licence), vendored by npm */\n",
        version.as_deref().unwrap_or("(unknown version)")
    );
    text.push_str(&read(LIBRARY_LICENCE)?);
    text.push('\n');
    for line in code
        .lines()
        .filter(|l| !l.starts_with("//# sourceMappingURL="))
    {
        text.push_str(line);
        text.push('\n');
    }
    Ok(text)
}

/// The first string value of `"key"` in a JSON text (enough for a package.json's version).
fn json_string_field(json: &str, key: &str) -> Option<String> {
    let after_key = &json[json.find(&format!("\"{key}\""))? + key.len() + 2..];
    let value = after_key
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    Some(value[..value.find('"')?].to_string())
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
