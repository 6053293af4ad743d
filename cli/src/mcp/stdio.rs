//! The server's standard input and output, with [`frame::screen`] between the client and
//! the MCP library: lines are read with a bound on their length (a client that never sends
//! a line end cannot grow the server), screened, and either passed to the library through
//! an in-memory pipe or answered here. One task writes stdout, so answers from here and
//! from the library never interleave within a line.

use super::frame::{self, Screened};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// How one bounded read ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line is in the buffer (without its `\n`); also the last bytes before the end.
    Read,
    /// A line longer than the bound, read past and dropped.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads one line into `buf` (cleared first), keeping at most `max` bytes of it.
pub async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut over = false;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(if over {
                Line::TooLong
            } else if buf.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        if !over {
            if buf.len() + take > max {
                over = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&avail[..take]);
            }
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            return Ok(if over { Line::TooLong } else { Line::Read });
        }
    }
}

/// Starts the tasks between the process's stdin/stdout and the library; returns the two
/// ends the library reads and writes, and the writer task (done once every answer is out).
pub fn start(max_line: usize) -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>) {
    const PIPE: usize = 1 << 16;
    let (lib_in, mut feed) = tokio::io::duplex(PIPE);
    let (lib_out, drain) = tokio::io::duplex(PIPE);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();

    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });

    let answers = tx.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        let mut buf = Vec::new();
        loop {
            match read_line(&mut input, &mut buf, max_line).await {
                Ok(Line::Read) => match frame::screen(&buf) {
                    Screened::Forward => {
                        buf.push(b'\n');
                        if feed.write_all(&buf).await.is_err() {
                            break;
                        }
                    }
                    Screened::Reply(r) => {
                        log::warn!("answered a request the server could not take: {r}");
                        let _ = answers.send(r.into_bytes());
                    }
                    Screened::Skip => {}
                },
                Ok(Line::TooLong) => {
                    log::warn!("discarded a message of more than {max_line} bytes");
                    let _ = answers.send(frame::too_long(max_line).into_bytes());
                }
                Ok(Line::End) => break,
                Err(e) => {
                    log::error!("reading stdin: {e}");
                    break;
                }
            }
        }
        // The end of the input ends the library's session.
        let _ = feed.shutdown().await;
    });

    tokio::spawn(async move {
        let mut lines = BufReader::new(drain);
        let mut buf = Vec::new();
        // The library's own messages are trusted; the bound only keeps memory in check.
        while let Ok(n) = lines.read_until(b'\n', &mut buf).await {
            if n == 0 {
                break;
            }
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if tx.send(std::mem::take(&mut buf)).is_err() {
                break;
            }
        }
    });
    (lib_in, lib_out, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_read_with_a_bound() {
        let data: &[u8] = b"short\nthis line is far too long\nok\nlast";
        let mut r = BufReader::with_capacity(4, data);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        loop {
            let l = read_line(&mut r, &mut buf, 10).await.unwrap();
            if l == Line::End {
                break;
            }
            got.push((l, String::from_utf8_lossy(&buf).into_owned()));
        }
        assert_eq!(
            got,
            vec![(Line::Read, "short".into()), (Line::TooLong, String::new()), (Line::Read, "ok".into()), (Line::Read, "last".into())]
        );
    }
}
