//! The one HTTP request the command line makes: a JSON POST to a cluster's coordinator
//! (Ray Serve), over plain HTTP/1.1 on a local or private network.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// POSTs `body` to `url` (`http://HOST:PORT/PATH`) and reads the JSON answer.
pub fn post_json(url: &str, body: &serde_json::Value) -> Result<serde_json::Value> {
    let Some(rest) = url.strip_prefix("http://") else { bail!("{url}: only http:// addresses are served") };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let mut s = TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    let payload = serde_json::to_vec(body)?;
    write!(s, "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", payload.len())?;
    s.write_all(&payload)?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).context("reading the answer")?;
    let split = resp.windows(4).position(|w| w == b"\r\n\r\n").context("an answer without headers")?;
    let head = String::from_utf8_lossy(&resp[..split]);
    let status = head.split_whitespace().nth(1).unwrap_or("");
    let mut body = resp[split + 4..].to_vec();
    if head.lines().any(|l| l.to_ascii_lowercase().starts_with("transfer-encoding:") && l.to_ascii_lowercase().contains("chunked")) {
        body = dechunk(&body)?;
    }
    if status != "200" {
        bail!("HTTP {status}: {}", String::from_utf8_lossy(&body).chars().take(500).collect::<String>());
    }
    serde_json::from_slice(&body).context("the answer is not JSON")
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").context("a broken chunk")?;
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).split(';').next().unwrap_or("").trim(), 16).context("a broken chunk size")?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size {
            bail!("a truncated chunk");
        }
        out.extend_from_slice(&b[..size]);
        b = b.get(size + 2..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_join() {
        assert_eq!(super::dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(), b"abcde");
        assert!(super::dechunk(b"9\r\nab").is_err());
    }
}
