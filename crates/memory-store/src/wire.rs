//! The JSON bodies the memory-stores API sends and receives beyond the objects of
//! [`model`](crate::model): one definition for the server (`memory-server`) and its clients
//! (`memory-mounts`), so neither builds them by hand.

use serde::{Deserialize, Serialize};

use crate::error::{Reason, StoreError};
use crate::model::{ListMemories, View};

impl ListMemories {
    /// The query of `GET …/memories` for these parameters, as `(key, value)` pairs (not yet
    /// percent-encoded; the default view and unset parameters are left out).
    ///
    /// ```
    /// use memory_store::{ListMemories, View};
    ///
    /// let params = ListMemories { path_prefix: Some("/a/".into()), depth: Some(1), view: View::Full, ..Default::default() };
    /// let query = params.to_query();
    /// assert_eq!(query, [("path_prefix", "/a/".to_owned()), ("depth", "1".to_owned()), ("view", "full".to_owned())]);
    /// let back = ListMemories::from_query(query.iter().map(|(k, v)| (*k, v.as_str()))).unwrap();
    /// assert_eq!(back, params);
    /// ```
    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        if let Some(prefix) = &self.path_prefix {
            query.push(("path_prefix", prefix.clone()));
        }
        if let Some(depth) = self.depth {
            query.push(("depth", depth.to_string()));
        }
        if let Some(limit) = self.limit {
            query.push(("limit", limit.to_string()));
        }
        if let Some(page) = &self.page {
            query.push(("page", page.clone()));
        }
        if self.view == View::Full {
            query.push(("view", "full".to_owned()));
        }
        query
    }

    /// Parses the query of `GET …/memories` (decoded pairs; of a repeated key the last one
    /// counts; other keys, such as `beta`, are ignored).
    ///
    /// # Errors
    /// [`StoreError::InvalidRequest`] for a `depth` or `limit` that is not an integer, or a
    /// `view` other than `basic` and `full` (the ranges are the engine's to check).
    pub fn from_query<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, StoreError> {
        let int = |name: &str, v: &str| {
            v.parse::<i64>()
                .map_err(|_| StoreError::invalid(format!("{name} must be an integer")))
        };
        let mut params = ListMemories::default();
        for (key, value) in pairs {
            match key {
                "path_prefix" => params.path_prefix = Some(value.to_owned()),
                "depth" => params.depth = Some(int(key, value)?),
                "limit" => params.limit = Some(int(key, value)?),
                "page" => params.page = Some(value.to_owned()),
                "view" => {
                    params.view = View::parse(value)
                        .ok_or_else(|| StoreError::invalid("view must be \"basic\" or \"full\""))?;
                }
                _ => {}
            }
        }
        Ok(params)
    }
}

/// The body of `POST /v1/memory_stores/{id}/memories`. `content` is required by the API but
/// nullable in its schema: `None` is refused (400) by the server, with a message saying so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateMemory {
    /// Where (a memory path).
    pub path: String,
    /// The text (`""` for an empty memory).
    #[serde(default)]
    pub content: Option<String>,
}

/// The error envelope of every failed request:
/// `{"type":"error","error":{…},"request_id":"req_…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    /// Always `"error"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What went wrong.
    pub error: ErrorBody,
    /// The request's id (also its `request-id` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The `error` object of an [`ErrorEnvelope`]: the hosted API's `type` and `message`, its
/// `conflicting_memory_id` and `conflicting_path` on path conflicts, and this project's
/// extension `reason` (a [`Reason`]), so that clients never sort errors by their text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The hosted API's `error.type` (`invalid_request_error`...).
    #[serde(rename = "type")]
    pub kind: String,
    /// For people.
    #[serde(default)]
    pub message: String,
    /// Extension: why, as data. Absent from servers that do not send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// On `memory_path_conflict_error`: the memory in the way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicting_memory_id: Option<String>,
    /// On `memory_path_conflict_error`: its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicting_path: Option<String>,
}

impl ErrorBody {
    /// The body of `e` as the server sends it. A backend failure's detail is for logs: its
    /// message here is a fixed text.
    pub fn of(e: &StoreError) -> Self {
        let message = match e {
            StoreError::Backend {
                retryable: true, ..
            } => "the store is busy; try again".to_owned(),
            StoreError::Backend { .. } => "internal server error".to_owned(),
            other => other.to_string(),
        };
        let (conflicting_memory_id, conflicting_path) = match e {
            StoreError::PathConflict {
                conflicting_memory_id,
                conflicting_path,
                ..
            } => (
                Some(conflicting_memory_id.clone()),
                Some(conflicting_path.clone()),
            ),
            _ => (None, None),
        };
        ErrorBody {
            kind: e.error_type().to_owned(),
            message,
            reason: Some(e.reason()),
            conflicting_memory_id,
            conflicting_path,
        }
    }

    /// The [`StoreError`] a client sees for this body, answered with HTTP `status`: by
    /// `type` (and by status when the type is missing or foreign), with the `reason` when
    /// sent. A failure of the server itself (5xx, 408, 429) is a
    /// [`Backend`](StoreError::Backend) error, retryable.
    pub fn into_error(self, status: u16) -> StoreError {
        let message = if self.message.is_empty() {
            format!("the server answered {status}")
        } else {
            self.message
        };
        let backend = |retryable: bool, message: String| StoreError::Backend {
            retryable,
            source: format!("the server answered {status}: {message}").into(),
        };
        match (self.kind.as_str(), status) {
            ("memory_path_conflict_error", _) => StoreError::PathConflict {
                message,
                conflicting_memory_id: self.conflicting_memory_id.unwrap_or_default(),
                conflicting_path: self.conflicting_path.unwrap_or_default(),
            },
            ("memory_precondition_failed_error", _) => StoreError::PreconditionFailed { message },
            (_, 408 | 429 | 500..=599) => backend(true, message),
            ("not_found_error", _) | ("", 404) => StoreError::NotFound { message },
            ("invalid_request_error", _) | ("", 400) => StoreError::InvalidRequest {
                message,
                reason: self.reason.unwrap_or(Reason::Unknown),
            },
            ("conflict_error", _) => StoreError::Conflict {
                message,
                reason: self.reason.unwrap_or(Reason::Unknown),
            },
            _ => backend(false, message),
        }
    }
}

impl ErrorEnvelope {
    /// Decodes an error answer (`status`, `body`); a body that is not an envelope becomes
    /// the error its status implies.
    pub fn decode(status: u16, body: &[u8]) -> StoreError {
        let error = serde_json::from_slice::<ErrorEnvelope>(body)
            .map(|e| e.error)
            .unwrap_or_else(|_| ErrorBody {
                kind: String::new(),
                message: String::new(),
                reason: None,
                conflicting_memory_id: None,
                conflicting_path: None,
            });
        error.into_error(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_survive_the_wire() {
        let errors = [
            StoreError::refused(Reason::StoreArchived, "archived"),
            StoreError::refused(Reason::PathNotNfc, "nfc"),
            StoreError::PreconditionFailed {
                message: "pre".into(),
            },
            StoreError::PathConflict {
                message: "taken".into(),
                conflicting_memory_id: "mem_1".into(),
                conflicting_path: "/a".into(),
            },
            StoreError::Conflict {
                message: "head".into(),
                reason: Reason::HeadVersion,
            },
            StoreError::NotFound {
                message: "gone".into(),
            },
        ];
        for e in errors {
            let envelope = ErrorEnvelope {
                kind: "error".into(),
                error: ErrorBody::of(&e),
                request_id: Some("req_1".into()),
            };
            let bytes = serde_json::to_vec(&envelope).unwrap();
            let back = ErrorEnvelope::decode(e.status(), &bytes);
            assert_eq!(back.reason(), e.reason(), "{e:?}");
            assert_eq!(back.error_type(), e.error_type());
            assert_eq!(back.to_string(), e.to_string());
        }
        assert!(ErrorEnvelope::decode(529, b"not json").is_retryable());
        assert!(ErrorEnvelope::decode(503, b"").is_retryable());
        assert!(matches!(
            ErrorEnvelope::decode(404, b""),
            StoreError::NotFound { .. }
        ));
        let old_server =
            br#"{"type":"error","error":{"type":"invalid_request_error","message":"x"}}"#;
        assert_eq!(
            ErrorEnvelope::decode(400, old_server).reason(),
            Reason::Unknown
        );
        let auth = br#"{"type":"error","error":{"type":"authentication_error","message":"no"}}"#;
        assert!(!ErrorEnvelope::decode(401, auth).is_retryable());
        assert!(!ErrorEnvelope::decode(401, auth).is_deterministic());
    }
}
