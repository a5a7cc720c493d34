//! Maths read aloud: a typst fragment as the words a screen reader speaks for its drawing
//! (`frac(1, 2)` → "1 over 2", `sqrt(x)` → "square root of x", `x^2` → "x squared"). A small
//! reading of the common forms, not typst's: whatever it does not know (a function, a symbol
//! name) is left as it is written, and a fragment it cannot follow (brackets that do not pair)
//! is spoken as its source.

/// What one piece of a fragment is.
#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    /// A name (`x`, `frac`, `arrow.r`).
    Name(&'a str),
    /// A number (`2`, `3.14`).
    Number(&'a str),
    /// A string: typst's text inside maths.
    Text(&'a str),
    /// An opening bracket.
    Open(char),
    /// A closing bracket.
    Close(char),
    Comma,
    Caret,
    Underscore,
    /// Any other symbol or run of symbols (`+`, `<=`, `->`).
    Symbol(&'a str),
    /// Space between pieces.
    Space,
}

fn tokens(source: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_whitespace() {
            let n = rest
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(rest.len());
            out.push(Token::Space);
            n
        } else if c.is_alphabetic() {
            // A name, with typst's dotted modifiers (`arrow.r.double`).
            let mut n = 0;
            let bytes: Vec<(usize, char)> = rest.char_indices().collect();
            let mut i = 0;
            while i < bytes.len() {
                let (at, ch) = bytes[i];
                if ch.is_alphanumeric() {
                    n = at + ch.len_utf8();
                    i += 1;
                } else if ch == '.'
                    && bytes
                        .get(i + 1)
                        .is_some_and(|(_, next)| next.is_alphabetic())
                {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token::Name(&rest[..n]));
            n
        } else if c.is_ascii_digit() {
            let n = rest
                .char_indices()
                .find(|&(i, ch)| {
                    !(ch.is_ascii_digit()
                        || (ch == '.' && rest[i + 1..].starts_with(|d: char| d.is_ascii_digit())))
                })
                .map_or(rest.len(), |(i, _)| i);
            out.push(Token::Number(&rest[..n]));
            n
        } else if c == '"' {
            match rest[1..].find('"') {
                Some(end) => {
                    out.push(Token::Text(&rest[1..1 + end]));
                    end + 2
                }
                None => {
                    out.push(Token::Symbol("\""));
                    1
                }
            }
        } else {
            let token = match c {
                '(' | '[' | '{' => Token::Open(c),
                ')' | ']' | '}' => Token::Close(c),
                ',' => Token::Comma,
                '^' => Token::Caret,
                '_' => Token::Underscore,
                _ => {
                    // A run of symbols, such as `<=`: up to the next other piece.
                    let n = rest
                        .char_indices()
                        .skip(1)
                        .find(|&(_, ch)| {
                            ch.is_alphanumeric() || ch.is_whitespace() || "()[]{},^_\"".contains(ch)
                        })
                        .map_or(rest.len(), |(i, _)| i);
                    out.push(Token::Symbol(&rest[..n]));
                    rest = &rest[n..];
                    continue;
                }
            };
            out.push(token);
            c.len_utf8()
        };
        rest = &rest[len..];
    }
    out
}

/// The closing bracket of `open`.
fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

/// The words of a symbol name or symbol typst draws, where they are known.
fn symbol_words(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "times" | "×" => "times",
        "div" | "÷" => "divided by",
        "pm" | "plus.minus" | "±" => "plus or minus",
        "mp" | "minus.plus" => "minus or plus",
        "<=" | "≤" | "lt.eq" => "is less than or equal to",
        ">=" | "≥" | "gt.eq" => "is greater than or equal to",
        "!=" | "≠" | "eq.not" => "is not equal to",
        "approx" | "≈" => "is approximately",
        "infinity" | "oo" | "∞" => "infinity",
        "->" | "arrow.r" | "→" => "tends to",
        "/" => "over",
        "dot.op" | "dot.c" | "⋅" => "times",
        "degree" | "°" => "degrees",
        _ => return None,
    })
}

/// A run of pieces, read up to a comma or closing bracket at its own depth.
struct Reader<'t, 'a> {
    tokens: &'t [Token<'a>],
    at: usize,
}

/// Why a fragment cannot be followed.
struct Lost;

impl<'a> Reader<'_, 'a> {
    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.at)
    }

    fn skip_space(&mut self) {
        while self.peek() == Some(&Token::Space) {
            self.at += 1;
        }
    }

    /// Pieces up to a comma or a closing bracket (not taken), as words.
    fn sequence(&mut self) -> Result<String, Lost> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some(Token::Comma) | Some(Token::Close(_)) => break,
                Some(Token::Space) => {
                    self.at += 1;
                    out.push(' ');
                }
                Some(_) => {
                    let piece = self.scripted()?;
                    out.push_str(&piece);
                }
            }
        }
        Ok(out)
    }

    /// One piece with its superscript and subscript, as words.
    fn scripted(&mut self) -> Result<String, Lost> {
        let mut out = self.piece()?;
        loop {
            match self.peek() {
                Some(Token::Underscore) => {
                    self.at += 1;
                    let sub = self.script()?;
                    out = format!("{out} sub {sub}");
                }
                Some(Token::Caret) => {
                    self.at += 1;
                    let power = self.script()?;
                    out = match power.as_str() {
                        "2" => format!("{out} squared"),
                        "3" => format!("{out} cubed"),
                        _ => format!("{out} to the power {power}"),
                    };
                }
                _ => return Ok(out),
            }
        }
    }

    /// A superscript or subscript: a bracketed group (its brackets dropped, as typst drops
    /// them) or one piece.
    fn script(&mut self) -> Result<String, Lost> {
        if let Some(Token::Open('(')) = self.peek() {
            self.at += 1;
            let inner = self.group_rest(')')?;
            return Ok(inner.trim().to_owned());
        }
        if let Some(&Token::Symbol(sign @ ("-" | "+"))) = self.peek() {
            // `x^-1`: the sign and what follows it.
            self.at += 1;
            let next = self.piece()?;
            return Ok(format!("{}{next}", if sign == "-" { "minus " } else { "" }));
        }
        self.piece()
    }

    /// The rest of a group opened with a bracket: its pieces and the closing bracket.
    fn group_rest(&mut self, close: char) -> Result<String, Lost> {
        let mut out = self.sequence()?;
        while self.peek() == Some(&Token::Comma) {
            self.at += 1;
            out.push(',');
            out.push_str(&self.sequence()?);
        }
        match self.peek() {
            Some(Token::Close(c)) if *c == close => {
                self.at += 1;
                Ok(out)
            }
            _ => Err(Lost),
        }
    }

    /// A call's arguments after its opening bracket, each as words.
    fn arguments(&mut self) -> Result<Vec<String>, Lost> {
        let mut args = vec![self.sequence()?.trim().to_owned()];
        while self.peek() == Some(&Token::Comma) {
            self.at += 1;
            args.push(self.sequence()?.trim().to_owned());
        }
        match self.peek() {
            Some(Token::Close(')')) => {
                self.at += 1;
                Ok(args)
            }
            _ => Err(Lost),
        }
    }

    /// One piece, as words.
    fn piece(&mut self) -> Result<String, Lost> {
        self.skip_space();
        let Some(token) = self.peek().cloned() else {
            return Err(Lost);
        };
        self.at += 1;
        Ok(match token {
            Token::Name(name) => {
                if self.peek() == Some(&Token::Open('(')) && name.chars().count() > 1 {
                    self.at += 1;
                    let args = self.arguments()?;
                    match (name, args.as_slice()) {
                        ("frac", [a, b]) => format!("{a} over {b}"),
                        ("sqrt", [x]) => format!("square root of {x}"),
                        ("root", [n, x]) => format!("root {n} of {x}"),
                        ("abs", [x]) => format!("absolute value of {x}"),
                        ("norm", [x]) => format!("norm of {x}"),
                        ("vec", items) => format!("vector {}", items.join(", ")),
                        ("overline", [x]) => format!("{x} bar"),
                        ("hat", [x]) => format!("{x} hat"),
                        ("bold" | "upright" | "italic" | "serif" | "sans" | "cal" | "bb", [x]) => {
                            x.clone()
                        }
                        ("text" | "lr" | "display" | "inline", [x]) => x.clone(),
                        _ => {
                            // Not a form this knows: its name and arguments as written.
                            format!("{name}({})", args.join(", "))
                        }
                    }
                } else {
                    symbol_words(name).map_or_else(|| name.to_owned(), str::to_owned)
                }
            }
            Token::Number(n) => n.to_owned(),
            Token::Text(text) => text.to_owned(),
            Token::Open(open) => {
                let inner = self.group_rest(closing(open))?;
                format!("{open}{inner}{}", closing(open))
            }
            Token::Symbol(s) => symbol_words(s).map_or_else(|| s.to_owned(), |w| format!(" {w} ")),
            Token::Comma => ",".to_owned(),
            Token::Close(_) | Token::Caret | Token::Underscore | Token::Space => {
                return Err(Lost);
            }
        })
    }
}

/// The words a screen reader speaks for the maths `source` (typst, between its dollars); the
/// source itself, trimmed, where it cannot be followed.
pub fn spoken(source: &str) -> String {
    let source = source.trim();
    let tokens = tokens(source);
    let mut reader = Reader {
        tokens: &tokens,
        at: 0,
    };
    match reader.sequence() {
        Ok(words) if reader.at == tokens.len() => {
            words.split_whitespace().collect::<Vec<_>>().join(" ")
        }
        _ => source.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::spoken;

    #[test]
    fn fractions_roots_and_powers_are_read_as_words() {
        assert_eq!(spoken("frac(1,2)"), "1 over 2");
        assert_eq!(spoken("frac(a + 1, b)"), "a + 1 over b");
        assert_eq!(spoken("sqrt(x)"), "square root of x");
        assert_eq!(spoken("root(3, 8)"), "root 3 of 8");
        assert_eq!(spoken("x^2"), "x squared");
        assert_eq!(spoken("x^3 + y^2"), "x cubed + y squared");
        assert_eq!(spoken("e^(2x + 1)"), "e to the power 2x + 1");
        assert_eq!(spoken("x^n"), "x to the power n");
        assert_eq!(spoken("x^-1"), "x to the power minus 1");
        assert_eq!(spoken("x_1 + x_2"), "x sub 1 + x sub 2");
        assert_eq!(spoken("abs(z) = 1"), "absolute value of z = 1");
        assert_eq!(spoken("a/b"), "a over b");
        assert_eq!(spoken("sqrt(frac(1, 4))"), "square root of 1 over 4");
    }

    #[test]
    fn symbols_and_greek_names_are_words() {
        assert_eq!(spoken("2 pi r"), "2 pi r");
        assert_eq!(spoken("theta = 30 degree"), "theta = 30 degrees");
        assert_eq!(spoken("x <= 3"), "x is less than or equal to 3");
        assert_eq!(spoken("a times b"), "a times b");
        assert_eq!(spoken("x = 3 pm 1"), "x = 3 plus or minus 1");
        assert_eq!(spoken("x -> infinity"), "x tends to infinity");
        assert_eq!(spoken("\"area\" = 12"), "area = 12");
    }

    #[test]
    fn plain_maths_reads_as_written() {
        assert_eq!(spoken(" z = 3 - 4i "), "z = 3 - 4i");
        assert_eq!(spoken("a + b i"), "a + b i");
        assert_eq!(spoken("f(x) = 2x"), "f(x) = 2x");
        assert_eq!(spoken("(x + 1)(x - 2)"), "(x + 1)(x - 2)");
        assert_eq!(spoken("3.14"), "3.14");
    }

    #[test]
    fn what_it_does_not_know_is_left_as_written() {
        assert_eq!(spoken("binom(n, k)"), "binom(n, k)");
        assert_eq!(spoken("mat(1, 2; 3, 4)"), "mat(1, 2; 3, 4)");
        assert_eq!(spoken("arrow.r.double"), "arrow.r.double");
        // Brackets that do not pair: the source.
        assert_eq!(spoken("frac(1, 2"), "frac(1, 2");
        assert_eq!(spoken("x)"), "x)");
        assert_eq!(spoken("x^"), "x^");
        assert_eq!(spoken(""), "");
    }
}
