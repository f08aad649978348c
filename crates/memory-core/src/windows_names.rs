//! Names Windows cannot hold as a file or folder, told apart once for every store that
//! writes memories as files.

/// Why Windows cannot hold a file or folder named `name`, if it cannot: a name ending in a
/// space or a dot (Windows drops them, so `a.md ` would be `a.md`), one holding a character
/// Windows forbids in names, or a name Windows reserves for a device (`CON`, `NUL`, `COM1`,
/// `LPT1`..., with any extension). A [`MemoryPath`](crate::MemoryPath) already refuses
/// control characters and `\`. Stores that put memories in files on Windows refuse such names
/// (memory-fs, memory-mounts' folder sync).
pub fn windows_name_problem(name: &str) -> Option<&'static str> {
    if name.ends_with([' ', '.']) {
        return Some("Windows cannot hold a name that ends in a space or a dot");
    }
    if name.contains(['<', '>', ':', '"', '|', '?', '*']) {
        return Some("Windows cannot hold a name with any of < > : \" | ? *");
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    let numbered = |prefix: &str| {
        upper.strip_prefix(prefix).is_some_and(|n| {
            matches!(
                n,
                "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
            )
        })
    };
    let device = matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || numbered("COM")
        || numbered("LPT");
    device.then_some("Windows reserves this name for a device")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_windows_cannot_hold_are_told_apart() {
        for bad in [
            "trail.md ",
            "dir.",
            "a:b",
            "pipe|.md",
            "what?",
            "star*",
            "<x>",
            "quote\"",
            "CON",
            "con",
            "Con.txt",
            "NUL.md",
            "nul",
            "aux.tar.gz",
            "PRN",
            "COM1",
            "lpt9.log",
            "COM¹",
            "CONIN$",
            "CON .md",
        ] {
            assert!(windows_name_problem(bad).is_some(), "{bad:?}");
        }
        for good in [
            "notes.md",
            "console.md",
            "CONS",
            "COM0",
            "COM10",
            "LPT",
            "nul-terminated.md",
            ".hidden",
            "a b.md",
            "café.md",
            "-rf",
            "...x",
        ] {
            assert_eq!(windows_name_problem(good), None, "{good:?}");
        }
    }
}
