//! The first look at each line a client sends, before the MCP library reads it: JSON-RPC
//! asks for an answer to every request, also to one that cannot be read, and the library
//! drops unparsable lines and reads `arguments` that are not an object as an unknown
//! method. Lines that are not JSON get a -32700 parse error, tool calls whose `params` or
//! `arguments` are not objects a -32602 with the request's id, lines over the size limit a
//! -32600; everything else goes on unchanged.
//!
//! Pure functions over bytes (serde_json only), so the fuzz target compiles this file as
//! it is.

use serde_json::{json, Value};

/// What to do with one line from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Screened {
    /// Pass it on to the server, as it came (without its line end).
    Forward,
    /// Answer it here with this JSON-RPC message (one line, no line end).
    Reply(String),
    /// A blank line: nothing to do.
    Skip,
}

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error response.
pub fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// The answer to a line longer than `limit` bytes, which was not read: its id is unknown.
pub fn too_long(limit: usize) -> String {
    error(Value::Null, INVALID_REQUEST, &format!("Invalid request: a message of more than {limit} bytes was discarded"))
}

/// Looks at one line (without its `\n`).
pub fn screen(line: &[u8]) -> Screened {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Skip;
    }
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Screened::Reply(error(Value::Null, PARSE_ERROR, &format!("Parse error: {e}"))),
    };
    let Some(m) = v.as_object() else {
        // Batches and bare values are the library's to answer.
        return Screened::Forward;
    };
    let id = match m.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        // A notification (no id) gets no answer, whatever it holds.
        _ => return Screened::Forward,
    };
    if m.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Screened::Forward;
    }
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let Some(params) = m.get("params") else {
        return Screened::Reply(error(id, INVALID_PARAMS, "Invalid params: tools/call needs `params` with the tool's `name`"));
    };
    let Some(p) = params.as_object() else {
        return Screened::Reply(error(id, INVALID_PARAMS, &format!("Invalid params: `params` must be an object, not {}", kind(params))));
    };
    if !p.get("name").is_some_and(Value::is_string) {
        return Screened::Reply(error(id, INVALID_PARAMS, "Invalid params: `params.name` must be the tool's name, a string"));
    }
    match p.get("arguments") {
        None | Some(Value::Object(_)) => Screened::Forward,
        Some(a) => Screened::Reply(error(id, INVALID_PARAMS, &format!("Invalid params: `arguments` must be an object, not {}", kind(a)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(s: Screened) -> Value {
        match s {
            Screened::Reply(r) => serde_json::from_str(&r).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn malformed_json_gets_a_parse_error() {
        for bad in [&b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\""[..], b"not json", b"\xff\xfe{}", b"{\"a\":1}}"] {
            let r = reply(screen(bad));
            assert_eq!(r["error"]["code"], PARSE_ERROR, "{r}");
            assert!(r["id"].is_null());
        }
        assert_eq!(screen(b"   \r"), Screened::Skip);
    }

    #[test]
    fn tool_calls_need_object_arguments() {
        let r = reply(screen(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"show","arguments":"x"}}"#));
        assert_eq!((r["id"].as_i64(), r["error"]["code"].as_i64()), (Some(7), Some(INVALID_PARAMS)));
        assert!(r["error"]["message"].as_str().unwrap().contains("not a string"));
        let r = reply(screen(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":[1]}"#));
        assert_eq!(r["id"], "a");
        let r = reply(screen(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#));
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        for ok in [
            &br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"status","arguments":{}}}"#[..],
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"status"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
        ] {
            assert_eq!(screen(ok), Screened::Forward, "{}", String::from_utf8_lossy(ok));
        }
    }

    #[test]
    fn an_oversized_line_is_answered_without_an_id() {
        let r: Value = serde_json::from_str(&too_long(100)).unwrap();
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        assert!(r["id"].is_null());
    }
}
