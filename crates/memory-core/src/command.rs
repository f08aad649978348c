//! [`MemoryCommand`]: a tool-use input, parsed and validated.

use serde_json::{Map, Value};

use crate::{MemoryPath, PathError};

/// The command names, in the order error messages list them.
pub const COMMAND_NAMES: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
];

/// The lines a `view` shows: `start..=end`, 1-based, `end == -1` meaning to the end.
///
/// It is only a pair of integers here; whether it fits the file is checked by the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewRange {
    /// First line shown, 1-based.
    pub start: i64,
    /// Last line shown, or -1 for the last line of the file.
    pub end: i64,
}

/// One of the six memory commands, with validated paths.
///
/// ```
/// use memory_core::{MemoryCommand, MemoryPath};
/// use serde_json::json;
///
/// let cmd = MemoryCommand::parse(&json!({
///     "command": "insert", "path": "/memories/todo.md", "insert_line": "2", "insert_text": "- call Bob"
/// })).unwrap();
/// assert_eq!(cmd, MemoryCommand::Insert {
///     path: MemoryPath::parse("/memories/todo.md").unwrap(),
///     insert_line: 2,
///     insert_text: "- call Bob".into(),
/// });
///
/// let err = MemoryCommand::parse(&json!({"command": "undo_edit", "path": "/memories/a"})).unwrap_err();
/// assert_eq!(err.to_string(),
///     "Error: Unknown command `undo_edit`. Expected one of: view, create, str_replace, insert, delete, rename");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryCommand {
    /// Show a directory listing or a file's numbered lines.
    View {
        /// The file or directory.
        path: MemoryPath,
        /// Which lines of a file to show.
        view_range: Option<ViewRange>,
    },
    /// Create a file.
    Create {
        /// The new file.
        path: MemoryPath,
        /// Its content.
        file_text: String,
    },
    /// Replace the one occurrence of `old_str` with `new_str`.
    StrReplace {
        /// The file to edit.
        path: MemoryPath,
        /// The text to find; must occur exactly once.
        old_str: String,
        /// The replacement (`""` when the input omits it).
        new_str: String,
    },
    /// Insert text after a line.
    Insert {
        /// The file to edit.
        path: MemoryPath,
        /// The line after which the text goes; 0 is the top.
        insert_line: i64,
        /// The text to insert.
        insert_text: String,
    },
    /// Delete a file or a directory.
    Delete {
        /// What to delete.
        path: MemoryPath,
    },
    /// Move a file or a directory.
    Rename {
        /// What to move.
        old_path: MemoryPath,
        /// Where to.
        new_path: MemoryPath,
    },
}

/// Why a tool-use input is not a [`MemoryCommand`]. Its `Display` is the tool's error text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("Error: Invalid tool input: expected a JSON object")]
    NotAnObject,
    /// `command` is missing or not a string.
    #[error(
        "Error: Missing or invalid field `command`. Expected one of: view, create, str_replace, insert, delete, rename"
    )]
    MissingCommand,
    /// `command` names no memory command.
    #[error(
        "Error: Unknown command `{0}`. Expected one of: view, create, str_replace, insert, delete, rename"
    )]
    UnknownCommand(String),
    /// A required field is missing, or a field has the wrong type.
    #[error("Error: Missing or invalid field `{field}` for command `{command}`")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// The command.
        command: &'static str,
    },
    /// `rename` of `/memories` itself, refused whatever the destination.
    #[error("Error: Cannot rename the /memories directory itself")]
    RenameRoot,
    /// A path breaks the path rules.
    #[error(transparent)]
    Path(#[from] PathError),
}

impl MemoryCommand {
    /// Parses a `tool_use` block's `input`. Unknown extra fields are ignored; an optional field
    /// that is `null` counts as absent.
    pub fn parse(input: &Value) -> Result<MemoryCommand, InputError> {
        let object = input.as_object().ok_or(InputError::NotAnObject)?;
        let name = object
            .get("command")
            .and_then(Value::as_str)
            .ok_or(InputError::MissingCommand)?;
        let command = *COMMAND_NAMES
            .iter()
            .find(|known| **known == name)
            .ok_or_else(|| InputError::UnknownCommand(name.to_owned()))?;
        let fields = Fields { object, command };
        Ok(match command {
            "view" => MemoryCommand::View {
                path: fields.path("path")?,
                view_range: fields.view_range()?,
            },
            "create" => MemoryCommand::Create {
                path: fields.path("path")?,
                file_text: fields.string("file_text")?,
            },
            "str_replace" => MemoryCommand::StrReplace {
                path: fields.path("path")?,
                old_str: fields.string("old_str")?,
                new_str: fields.optional_string("new_str")?.unwrap_or_default(),
            },
            "insert" => MemoryCommand::Insert {
                path: fields.path("path")?,
                insert_line: fields.integer("insert_line")?,
                insert_text: fields.string("insert_text")?,
            },
            "delete" => MemoryCommand::Delete {
                path: fields.path("path")?,
            },
            _ => {
                let old_path = fields.path("old_path")?;
                let new_path = fields.string("new_path")?;
                // Renaming the root is refused before the destination is even looked at.
                if old_path.is_root() {
                    return Err(InputError::RenameRoot);
                }
                MemoryCommand::Rename {
                    old_path,
                    new_path: MemoryPath::parse(&new_path)?,
                }
            }
        })
    }

    /// The command's name, as Claude sends it.
    pub fn name(&self) -> &'static str {
        match self {
            MemoryCommand::View { .. } => "view",
            MemoryCommand::Create { .. } => "create",
            MemoryCommand::StrReplace { .. } => "str_replace",
            MemoryCommand::Insert { .. } => "insert",
            MemoryCommand::Delete { .. } => "delete",
            MemoryCommand::Rename { .. } => "rename",
        }
    }

    /// Whether the command may change the store.
    pub fn is_write(&self) -> bool {
        !matches!(self, MemoryCommand::View { .. })
    }
}

struct Fields<'a> {
    object: &'a Map<String, Value>,
    command: &'static str,
}

impl Fields<'_> {
    fn invalid(&self, field: &'static str) -> InputError {
        InputError::InvalidField {
            field,
            command: self.command,
        }
    }

    fn present(&self, field: &'static str) -> Option<&Value> {
        self.object.get(field).filter(|v| !v.is_null())
    }

    fn optional_string(&self, field: &'static str) -> Result<Option<String>, InputError> {
        match self.present(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(field)),
        }
    }

    fn string(&self, field: &'static str) -> Result<String, InputError> {
        self.optional_string(field)?
            .ok_or_else(|| self.invalid(field))
    }

    fn path(&self, field: &'static str) -> Result<MemoryPath, InputError> {
        Ok(MemoryPath::parse(&self.string(field)?)?)
    }

    fn integer(&self, field: &'static str) -> Result<i64, InputError> {
        self.present(field)
            .and_then(as_integer)
            .ok_or_else(|| self.invalid(field))
    }

    fn view_range(&self) -> Result<Option<ViewRange>, InputError> {
        let Some(value) = self.present("view_range") else {
            return Ok(None);
        };
        match value.as_array().map(Vec::as_slice) {
            Some([start, end]) => match (as_integer(start), as_integer(end)) {
                (Some(start), Some(end)) => Ok(Some(ViewRange { start, end })),
                _ => Err(self.invalid("view_range")),
            },
            _ => Err(self.invalid("view_range")),
        }
    }
}

/// An integer as Claude may send it: a JSON integer, a number without a fractional part
/// (`2.0`), or a string of ASCII digits with an optional leading `-` (`"3"`, `"-1"`).
fn as_integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            let f = n.as_f64()?;
            // 2^63 is exactly representable; anything at or beyond it does not fit an i64.
            let fits = f.fract() == 0.0
                && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f);
            fits.then_some(f as i64)
        }),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(input: Value) -> String {
        MemoryCommand::parse(&input).unwrap_err().to_string()
    }

    #[test]
    fn integers() {
        for (v, want) in [
            (json!(3), Some(3)),
            (json!(2.0), Some(2)),
            (json!("3"), Some(3)),
            (json!("-1"), Some(-1)),
            (json!(1.5), None),
            (json!("1.5"), None),
            (json!("abc"), None),
            (json!(true), None),
            (json!(""), None),
            (json!("-"), None),
            (json!(" 2 "), None),
            (json!("+2"), None),
            (json!("1_0"), None),
            (json!(1e300), None),
            (json!("99999999999999999999"), None),
        ] {
            assert_eq!(as_integer(&v), want, "{v}");
        }
    }

    #[test]
    fn bad_inputs() {
        assert_eq!(
            err(json!([1, 2])),
            "Error: Invalid tool input: expected a JSON object"
        );
        assert_eq!(
            err(json!({"command": "view"})),
            "Error: Missing or invalid field `path` for command `view`"
        );
        assert_eq!(
            err(json!({"command": "create", "path": "/memories/a"})),
            "Error: Missing or invalid field `file_text` for command `create`"
        );
        assert_eq!(
            err(
                json!({"command": "insert", "path": "/memories/a", "insert_line": 1.5, "insert_text": "x"})
            ),
            "Error: Missing or invalid field `insert_line` for command `insert`"
        );
        assert_eq!(
            err(json!({"command": "view", "path": "/memories/a", "view_range": [1]})),
            "Error: Missing or invalid field `view_range` for command `view`"
        );
        assert_eq!(
            err(json!({"command": "view", "path": "/etc/passwd"})),
            "Error: Path must start with /memories, got: /etc/passwd"
        );
        assert!(err(json!({"path": "/memories"})).contains("`command`"));
        assert!(
            err(json!({"command": "VIEW", "path": "/memories"})).contains("Unknown command `VIEW`")
        );
    }

    #[test]
    fn optional_fields() {
        let cmd = MemoryCommand::parse(&json!({
            "command": "str_replace", "path": "/memories/a", "old_str": "x", "extra": 1
        }))
        .unwrap();
        assert!(matches!(cmd, MemoryCommand::StrReplace { ref new_str, .. } if new_str.is_empty()));
        let cmd = MemoryCommand::parse(
            &json!({"command": "view", "path": "/memories", "view_range": null}),
        )
        .unwrap();
        assert_eq!(
            cmd,
            MemoryCommand::View {
                path: MemoryPath::root(),
                view_range: None
            }
        );
        let cmd = MemoryCommand::parse(
            &json!({"command": "view", "path": "/memories/a", "view_range": ["2", -1]}),
        )
        .unwrap();
        assert!(matches!(
            cmd,
            MemoryCommand::View {
                view_range: Some(ViewRange { start: 2, end: -1 }),
                ..
            }
        ));
    }
}
