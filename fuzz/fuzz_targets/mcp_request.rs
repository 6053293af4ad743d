//! Any line a client may send to `beryl mcp`: the server's first look at it (the file the
//! server compiles, included as it is) must answer or pass it on without panicking, its
//! answers must be JSON-RPC errors, and what it passes on must be what the MCP library
//! then reads (or refuses) without panicking.
#![no_main]

#[path = "../../cli/src/mcp/frame.rs"]
mod frame;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match frame::screen(data) {
        frame::Screened::Reply(r) => {
            let v: serde_json::Value = serde_json::from_str(&r).expect("an answer is JSON");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(v["error"]["code"].as_i64().is_some_and(|c| (-32700..=-32600).contains(&c)), "{r}");
            assert!(v["id"].is_null() || v["id"].is_number() || v["id"].is_string());
        }
        frame::Screened::Forward => {
            let line = data.strip_suffix(b"\r").unwrap_or(data);
            let _ = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(line);
        }
        frame::Screened::Skip => {}
    }
});
