//! Opaque page tokens: `page_` + URL-safe base64 of a small JSON object naming where the
//! next page starts (a key, never an offset, so concurrent inserts neither repeat nor skip
//! items that were there before).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::Timestamp;
use crate::error::{Result, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k")]
pub(crate) enum Cursor {
    /// After the store `(t, i)` in newest-first order.
    #[serde(rename = "s")]
    Stores { t: i64, i: String },
    /// Memories of the listing `(p, d)` from the path `l` (inclusive when `x`).
    #[serde(rename = "m")]
    Memories {
        p: String,
        d: i64,
        l: String,
        x: bool,
    },
    /// After the version `(t, i)` in newest-first order, of the store `s`.
    #[serde(rename = "v")]
    Versions { s: String, t: i64, i: String },
}

impl Cursor {
    pub(crate) fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("page_{}", URL_SAFE_NO_PAD.encode(json))
    }

    pub(crate) fn decode(token: &str) -> Result<Self> {
        let bad = || StoreError::invalid("page is not a page token of this listing");
        let b64 = token.strip_prefix("page_").ok_or_else(bad)?;
        let json = URL_SAFE_NO_PAD.decode(b64).map_err(|_| bad())?;
        serde_json::from_slice(&json).map_err(|_| bad())
    }

    pub(crate) fn stores(token: &str) -> Result<(Timestamp, String)> {
        match Self::decode(token)? {
            Cursor::Stores { t, i } => Ok((Timestamp::from_micros(t), i)),
            _ => Err(StoreError::invalid(
                "page is not a page token of this listing",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let c = Cursor::Memories {
            p: "/a/".into(),
            d: 1,
            l: "/a/b0".into(),
            x: true,
        };
        let token = c.encode();
        assert!(token.starts_with("page_"));
        assert_eq!(Cursor::decode(&token).unwrap(), c);
        for bad in ["", "page_", "page_!!", "nope", "page_e30"] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
        assert!(Cursor::stores(&token).is_err());
    }
}
