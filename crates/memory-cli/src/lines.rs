//! Bounded line input: standard input read on a thread of its own, one line at most
//! [`MAX_LINE_BYTES`] long in memory, handed over in batches.
//!
//! `memory exec` and `memory mcp` read their input through [`spawn_reader`]: a dedicated
//! thread reads and splits the lines and sends every complete line already buffered in one
//! batch, so the async side gets many lines per hand-off when they arrive together (a piped
//! file, a pipelining client) and each line as soon as it is complete otherwise.
//!
//! A line longer than the bound is never held whole: its first bytes are dropped as soon as the
//! bound is passed, the rest is skipped up to its `\n`, and it arrives as [`Line::TooLong`],
//! with its length and the few top-level fields asked for (an `id`, a `type`) picked out on
//! the way, so that its answer can still name the request it answers. Memory stays bounded
//! whatever the input: at most a few lines of [`MAX_LINE_BYTES`] are in flight at once.

use std::io::{BufRead, BufReader, Read};

use serde_json::Value;
use tokio::sync::mpsc;

/// The longest input line read whole: 4 MiB, far above any valid memory-tool command (a file
/// holds at most 100 KB of text, under 600 KB even with every character escaped).
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// Lines handed over in one batch stop growing at this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for the async side; with [`BATCH_BYTES`] and [`MAX_LINE_BYTES`] this bounds
/// the memory of the input in flight.
const BATCHES_IN_FLIGHT: usize = 2;

/// One input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A whole line without its final `\n` (a last line without `\n` counts too).
    Complete(Vec<u8>),
    /// A line longer than the bound; its bytes were skipped.
    TooLong(TooLong),
}

/// What is known of a line that was too long to read: its length and some top-level fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLong {
    /// The line's length in bytes, without its `\n`.
    pub bytes: u64,
    /// The bound it passed.
    pub max: usize,
    fields: Vec<(&'static str, Value)>,
}

impl TooLong {
    /// The value of a top-level string, number, boolean or null field the reader was asked to
    /// pick out, if the line is a JSON object that has it (first occurrence, at most 256 bytes).
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(wanted, _)| *wanted == name)
            .map(|(_, value)| value)
    }
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the line is {} bytes long, more than the {} bytes ({} MiB) a line may have",
            self.bytes,
            self.max,
            self.max >> 20
        )
    }
}

/// Splits a reader into bounded lines.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: BufReader<R>,
    max: usize,
    wanted: &'static [&'static str],
}

impl<R: Read> LineReader<R> {
    /// Lines of `reader`, each at most `max` bytes; of a longer line, the top-level fields
    /// named in `wanted` are kept.
    pub fn new(reader: R, max: usize, wanted: &'static [&'static str]) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 << 10, reader),
            max,
            wanted,
        }
    }

    /// Whether a whole line is already buffered, so that reading it cannot block.
    fn line_buffered(&self) -> bool {
        self.reader.buffer().contains(&b'\n')
    }

    /// The next line, or `None` at the end of input.
    ///
    /// # Errors
    /// Reading failed.
    pub fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut skipped: Option<(u64, FieldScanner)> = None;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match skipped {
                    Some((bytes, scanner)) => Some(self.too_long(bytes, scanner)),
                    None if line.is_empty() => None,
                    None => Some(Line::Complete(line)),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            match &mut skipped {
                Some((bytes, scanner)) => {
                    scanner.feed(chunk);
                    *bytes += chunk.len() as u64;
                }
                None if line.len() + chunk.len() > self.max => {
                    let mut scanner = FieldScanner::new(self.wanted);
                    scanner.feed(&line);
                    scanner.feed(chunk);
                    skipped = Some(((line.len() + chunk.len()) as u64, scanner));
                    line = Vec::new();
                }
                None => line.extend_from_slice(chunk),
            }
            let consumed = chunk.len() + usize::from(newline.is_some());
            self.reader.consume(consumed);
            if newline.is_some() {
                return Ok(Some(match skipped {
                    Some((bytes, scanner)) => self.too_long(bytes, scanner),
                    None => Line::Complete(line),
                }));
            }
        }
    }

    fn too_long(&self, bytes: u64, scanner: FieldScanner) -> Line {
        Line::TooLong(TooLong {
            bytes,
            max: self.max,
            fields: scanner.finish(),
        })
    }
}

/// Reads `reader` on a thread of its own and sends its lines in batches (every complete line
/// already buffered, up to about 1 MiB, goes in one batch). The channel closes at the end of
/// input; a read error is the last item. The thread stops when the receiver is dropped.
///
/// # Errors
/// The thread could not be started.
pub fn spawn_reader<R>(
    reader: R,
    max: usize,
    wanted: &'static [&'static str],
) -> std::io::Result<mpsc::Receiver<std::io::Result<Vec<Line>>>>
where
    R: Read + Send + 'static,
{
    let (tx, rx) = mpsc::channel(BATCHES_IN_FLIGHT);
    std::thread::Builder::new()
        .name("memory-input".into())
        .spawn(move || {
            let mut lines = LineReader::new(reader, max, wanted);
            let mut batch = Vec::new();
            let mut batch_bytes = 0;
            loop {
                match lines.next_line() {
                    Ok(Some(line)) => {
                        batch_bytes += match &line {
                            Line::Complete(bytes) => bytes.len(),
                            Line::TooLong(_) => 64,
                        };
                        batch.push(line);
                        if batch_bytes < BATCH_BYTES && lines.line_buffered() {
                            continue;
                        }
                        batch_bytes = 0;
                        if tx.blocking_send(Ok(std::mem::take(&mut batch))).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        if !batch.is_empty() {
                            let _ = tx.blocking_send(Ok(batch));
                        }
                        return;
                    }
                    Err(e) => {
                        if !batch.is_empty() && tx.blocking_send(Ok(batch)).is_err() {
                            return;
                        }
                        let _ = tx.blocking_send(Err(e));
                        return;
                    }
                }
            }
        })?;
    Ok(rx)
}

/// Picks top-level scalar fields out of a JSON object fed to it in pieces, in constant memory.
///
/// It follows only the structure (strings, escapes, nesting) and keeps the raw text of a wanted
/// field's value while it is at most [`FieldScanner::MAX_VALUE`] bytes; anything that is not
/// an object stops it, keeping what it found.
///
/// Why not `serde_json`'s streaming reader: it buffers every object key, and any string it
/// hands to a visitor, whole, so one hostile line holding a gigabyte-long key would take a
/// gigabyte; this scanner keeps at most [`FieldScanner::MAX_KEY`] bytes of a key and
/// [`FieldScanner::MAX_VALUE`] of a value, and hands the kept value to `serde_json` to parse.
#[derive(Debug)]
struct FieldScanner {
    wanted: &'static [&'static str],
    state: State,
    /// Inside a string (a key, a value, or a nested one).
    in_string: bool,
    escaped: bool,
    /// Nesting below the top-level object while skipping a value.
    depth: u32,
    key: Vec<u8>,
    /// The wanted field whose value is being captured, and its raw text so far.
    capture: Option<(&'static str, Vec<u8>)>,
    found: Vec<(&'static str, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Inside the object, before a key (or the closing `}`).
    BeforeKey,
    /// Reading a key.
    Key,
    /// After a key, before `:`.
    AfterKey,
    /// After `:`, before the value.
    BeforeValue,
    /// Inside a scalar value (number, `true`, ...), or a string value when `in_string`.
    Scalar,
    /// Inside a nested object or array.
    Nested,
    /// After a value, before `,` or `}`.
    AfterValue,
    /// The object ended, or the input is no object: nothing more to find.
    Done,
}

impl FieldScanner {
    /// Longest raw value kept.
    const MAX_VALUE: usize = 256;
    /// Longest key compared.
    const MAX_KEY: usize = 64;

    fn new(wanted: &'static [&'static str]) -> Self {
        FieldScanner {
            wanted,
            state: if wanted.is_empty() {
                State::Done
            } else {
                State::Start
            },
            in_string: false,
            escaped: false,
            depth: 0,
            key: Vec::new(),
            capture: None,
            found: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.state == State::Done {
                return;
            }
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        let space = matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        match self.state {
            State::Done => {}
            State::Start => match b {
                b'{' => self.state = State::BeforeKey,
                0xEF | 0xBB | 0xBF => {} // a byte-order mark
                _ if space => {}
                _ => self.state = State::Done,
            },
            State::BeforeKey => match b {
                b'"' => {
                    self.key.clear();
                    self.state = State::Key;
                }
                _ if space => {}
                _ => self.state = State::Done,
            },
            State::Key => {
                if self.escaped {
                    self.escaped = false;
                    self.push_key(b);
                } else if b == b'\\' {
                    self.escaped = true;
                    self.push_key(b);
                } else if b == b'"' {
                    self.state = State::AfterKey;
                } else {
                    self.push_key(b);
                }
            }
            State::AfterKey => match b {
                b':' => self.state = State::BeforeValue,
                _ if space => {}
                _ => self.state = State::Done,
            },
            State::BeforeValue => {
                if space {
                    return;
                }
                let key = std::str::from_utf8(&self.key).ok();
                let wanted = key.and_then(|key| self.wanted.iter().find(|w| **w == key));
                let already = wanted.is_some_and(|w| self.found.iter().any(|(f, _)| f == w));
                if let Some(name) = wanted.filter(|_| !already) {
                    self.capture = Some((name, Vec::new()));
                }
                match b {
                    b'{' | b'[' => {
                        self.capture = None;
                        self.depth = 1;
                        self.state = State::Nested;
                    }
                    b'"' => {
                        self.push_value(b);
                        self.in_string = true;
                        self.state = State::Scalar;
                    }
                    _ => {
                        self.push_value(b);
                        self.state = State::Scalar;
                    }
                }
            }
            State::Scalar if self.in_string => {
                self.push_value(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.end_value();
                    self.state = State::AfterValue;
                }
            }
            State::Scalar => match b {
                b',' => {
                    self.end_value();
                    self.state = State::BeforeKey;
                }
                b'}' => {
                    self.end_value();
                    self.state = State::Done;
                }
                _ if space => {
                    self.end_value();
                    self.state = State::AfterValue;
                }
                _ => self.push_value(b),
            },
            State::Nested => {
                if self.in_string {
                    if self.escaped {
                        self.escaped = false;
                    } else if b == b'\\' {
                        self.escaped = true;
                    } else if b == b'"' {
                        self.in_string = false;
                    }
                    return;
                }
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.state = State::AfterValue;
                        }
                    }
                    _ => {}
                }
            }
            State::AfterValue => match b {
                b',' => self.state = State::BeforeKey,
                _ if space => {}
                _ => self.state = State::Done,
            },
        }
    }

    fn push_key(&mut self, b: u8) {
        if self.key.len() <= Self::MAX_KEY {
            self.key.push(b);
        }
    }

    fn push_value(&mut self, b: u8) {
        let too_long = match &mut self.capture {
            Some((_, value)) if value.len() < Self::MAX_VALUE => {
                value.push(b);
                false
            }
            Some(_) => true,
            None => false,
        };
        if too_long {
            self.capture = None;
        }
    }

    fn end_value(&mut self) {
        if let Some((name, raw)) = self.capture.take()
            && let Ok(value) = serde_json::from_slice::<Value>(&raw)
            && !value.is_object()
            && !value.is_array()
        {
            self.found.push((name, value));
        }
    }

    fn finish(self) -> Vec<(&'static str, Value)> {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max, &["id", "type"]);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    fn complete(text: &str) -> Line {
        Line::Complete(text.as_bytes().to_vec())
    }

    #[test]
    fn splits_on_newline_and_keeps_a_last_line_without_one() {
        assert_eq!(
            lines(b"a\n\nb\r\nc", 100),
            vec![complete("a"), complete(""), complete("b\r"), complete("c")]
        );
        assert_eq!(lines(b"", 100), vec![]);
        assert_eq!(lines(b"\n", 100), vec![complete("")]);
    }

    #[test]
    fn a_line_at_the_bound_is_read_and_one_above_is_skipped() {
        let got = lines(b"12345\n123456\nok", 5);
        assert_eq!(got[0], complete("12345"));
        let Line::TooLong(too_long) = &got[1] else {
            panic!("{got:?}")
        };
        assert_eq!(too_long.bytes, 6);
        assert_eq!(got[2], complete("ok"));
    }

    #[test]
    fn fields_of_a_long_line_are_found_in_any_position() {
        let filler = "x".repeat(200_000);
        let line = format!(
            r#"{{"jsonrpc":"2.0","params":{{"a":["}}",{{"id":9}}],"t":"{filler}\"\\"}},"type" : "tool_use", "id":"toolu_1","more":"{filler}"}}"#
        );
        let got = lines(format!("{line}\nnext\n").as_bytes(), 1000);
        let Line::TooLong(too_long) = &got[0] else {
            panic!()
        };
        assert_eq!(too_long.bytes, line.len() as u64);
        assert_eq!(too_long.field("id"), Some(&json!("toolu_1")));
        assert_eq!(too_long.field("type"), Some(&json!("tool_use")));
        assert_eq!(got[1], complete("next"));
        // A number id at the end, just before the closing brace.
        let line = format!(r#"{{"params":"{filler}","id":42}}"#);
        let got = lines(line.as_bytes(), 1000);
        let Line::TooLong(too_long) = &got[0] else {
            panic!()
        };
        assert_eq!(too_long.field("id"), Some(&json!(42)));
        // No object, or no such field: nothing found.
        for line in [format!("[{filler}]"), format!(r#"{{"x":"{filler}"}}"#)] {
            let got = lines(line.as_bytes(), 1000);
            let Line::TooLong(too_long) = &got[0] else {
                panic!()
            };
            assert_eq!(too_long.field("id"), None);
        }
    }

    #[tokio::test]
    async fn the_reader_thread_sends_every_line_in_order() {
        let input: Vec<u8> = (0..10_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut rx = spawn_reader(std::io::Cursor::new(input), 100, &[]).unwrap();
        let mut n = 0;
        while let Some(batch) = rx.recv().await {
            for line in batch.unwrap() {
                assert_eq!(line, complete(&n.to_string()));
                n += 1;
            }
        }
        assert_eq!(n, 10_000);
    }
}
