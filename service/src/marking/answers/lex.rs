//! The first steps of normalising: unicode variants folded ([`fold`]), superscripts and
//! subscripts spelt out, and the text lexed into tokens ([`lex`]) for the maths parser.

/// Stands for `and` while rendering, until it is known whether the text holds an inequality.
pub(super) const AND_MARK: char = '\u{E000}';

/// Superscript characters and what they stand for.
fn superscript(c: char) -> Option<char> {
    Some(match c {
        '⁰' => '0',
        '¹' => '1',
        '²' => '2',
        '³' => '3',
        '⁴' => '4',
        '⁵' => '5',
        '⁶' => '6',
        '⁷' => '7',
        '⁸' => '8',
        '⁹' => '9',
        '⁺' => '+',
        '⁻' => '-',
        '⁼' => '=',
        '⁽' => '(',
        '⁾' => ')',
        'ⁿ' => 'n',
        'ⁱ' => 'i',
        'ˣ' => 'x',
        'ʸ' => 'y',
        _ => return None,
    })
}

/// Subscript characters and what they stand for.
fn subscript(c: char) -> Option<char> {
    Some(match c {
        '₀' => '0',
        '₁' => '1',
        '₂' => '2',
        '₃' => '3',
        '₄' => '4',
        '₅' => '5',
        '₆' => '6',
        '₇' => '7',
        '₈' => '8',
        '₉' => '9',
        '₊' => '+',
        '₋' => '-',
        '₌' => '=',
        '₍' => '(',
        '₎' => ')',
        'ₐ' => 'a',
        'ₑ' => 'e',
        'ₒ' => 'o',
        'ₓ' => 'x',
        'ᵢ' => 'i',
        'ⱼ' => 'j',
        'ₖ' => 'k',
        'ₘ' => 'm',
        'ₙ' => 'n',
        'ₚ' => 'p',
        'ₛ' => 's',
        'ₜ' => 't',
        _ => return None,
    })
}

/// Folds unicode variants to one spelling, drops `$` and quotes, and spells out superscripts,
/// subscripts and radicals with an index.
pub(super) fn fold(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if superscript(c).is_some() {
            let mut run = String::new();
            while let Some(s) = chars.get(i).copied().and_then(superscript) {
                run.push(s);
                i += 1;
            }
            // An index stands before `√` with nothing it could be a power of.
            let index = chars.get(i) == Some(&'√')
                && run.chars().all(|c| c.is_ascii_digit())
                && !out.ends_with(|p: char| p.is_alphanumeric() || matches!(p, ')' | ']' | '}'));
            if index {
                out.push_str(&format!("√[{run}]"));
                i += 1;
            } else {
                out.push_str(&format!("^({run})"));
            }
            continue;
        }
        if subscript(c).is_some() {
            let mut run = String::new();
            while let Some(s) = chars.get(i).copied().and_then(subscript) {
                run.push(s);
                i += 1;
            }
            out.push_str(&format!("_({run})"));
            continue;
        }
        match c {
            '$' | '"' | '“' | '”' | '„' | '\\' | '\u{200B}' | '\u{200C}' | '\u{200D}'
            | '\u{FEFF}' | '\u{00AD}' => {}
            '\u{2212}'
            | '\u{2010}'..='\u{2015}'
            | '\u{FE63}'
            | '\u{FF0D}'
            | '\u{2043}'
            | '\u{2796}' => out.push('-'),
            '×' | '✕' | '✖' | '⨯' | '·' | '⋅' | '∙' | '∗' => out.push('*'),
            '÷' | '∕' | '⁄' | '➗' => out.push('/'),
            '⩽' | '≦' => out.push('≤'),
            '⩾' | '≧' => out.push('≥'),
            '˚' | 'º' => out.push('°'),
            '′' | '’' | '‘' | 'ʼ' | '´' | '`' | 'ʹ' => out.push('\''),
            '″' => out.push_str("''"),
            '∛' => out.push_str("√[3]"),
            '∜' => out.push_str("√[4]"),
            'ϵ' => out.push('ε'),
            'ϕ' => out.push('φ'),
            'ϑ' => out.push('θ'),
            '€' | '∊' => out.push('∈'),
            '∣' => out.push('|'),
            '∶' => out.push(':'),
            '⟹' => out.push('⇒'),
            '⟶' => out.push('→'),
            '∧' => out.push_str(" and "),
            '∨' => out.push_str(" or "),
            'ﬁ' => out.push_str("fi"),
            'ﬂ' => out.push_str("fl"),
            'ﬀ' => out.push_str("ff"),
            '\u{FF01}'..='\u{FF5E}' => {
                out.push(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c));
            }
            c if c.is_whitespace() => out.push(' '),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// A lexical token of folded text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// Digits with at most one decimal point (`12`, `0.75`, `.75`).
    Num(String),
    /// A run of ASCII letters, or a dotted typst symbol name (`plus.minus`).
    Word(String),
    /// Any other character.
    Sym(char),
    /// `√`, with its index if it has one (`√[3]`).
    Radical(Option<String>),
    /// Whitespace.
    Space,
}

/// Dotted typst symbol names that are read as one word.
const DOTTED: &[&str] = &[
    "plus.minus",
    "minus.plus",
    "dot.op",
    "dot.c",
    "in.not",
    "lt.eq",
    "gt.eq",
    "lt.eq.slant",
    "gt.eq.slant",
    "eq.not",
    "arrow.r",
    "arrow.r.double",
    "arrow.l.r.double",
    "theta.alt",
    "phi.alt",
    "epsilon.alt",
    "dots.h",
    "dots.c",
    "subset.eq",
];

/// Splits folded text into tokens.
pub(super) fn lex(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch.is_whitespace() {
            if toks.last() != Some(&Tok::Space) {
                toks.push(Tok::Space);
            }
            i += 1;
            continue;
        }
        let shorthand = [
            ("<=>", '⇔'),
            ("<==>", '⇔'),
            ("==>", '⇒'),
            ("<=", '≤'),
            (">=", '≥'),
            ("!=", '≠'),
            ("=>", '⇒'),
            ("->", '→'),
            ("...", '…'),
        ]
        .into_iter()
        .find(|(s, _)| {
            let n = s.chars().count();
            i + n <= c.len() && c[i..i + n].iter().copied().eq(s.chars())
        });
        if let Some((s, sym)) = shorthand {
            toks.push(Tok::Sym(sym));
            i += s.chars().count();
            continue;
        }
        let leading_point = ch == '.'
            && next.is_some_and(|n| n.is_ascii_digit())
            && !(i > 0 && c[i - 1].is_ascii_digit());
        if ch.is_ascii_digit() || leading_point {
            let end = scan_decimal(&c, i);
            toks.push(Tok::Num(c[i..end].iter().collect()));
            i = end;
            continue;
        }
        if ch.is_ascii_alphabetic() {
            let (word, end) = read_word(&c, i);
            toks.push(Tok::Word(word));
            i = end;
            continue;
        }
        if ch == '√' {
            if next == Some('[')
                && let Some(close) = c[i + 2..].iter().position(|&x| x == ']')
                && close > 0
                && close <= 8
                && c[i + 2..i + 2 + close].iter().all(|x| x.is_alphanumeric())
            {
                toks.push(Tok::Radical(Some(c[i + 2..i + 2 + close].iter().collect())));
                i += close + 3;
            } else {
                toks.push(Tok::Radical(None));
                i += 1;
            }
            continue;
        }
        if ch == '&' {
            toks.push(Tok::Word("and".to_string()));
            i += 1;
            continue;
        }
        toks.push(Tok::Sym(ch));
        i += 1;
    }
    toks
}

/// The end of the number starting at `i`: digits, then `.` and digits (or `.` and digits).
pub(super) fn scan_decimal(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_ascii_digit() {
        i += 1;
    }
    if i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
        i += 1;
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
    }
    i
}

/// A run of ASCII letters at `i`, extended over dots when that makes a dotted symbol name.
fn read_word(c: &[char], i: usize) -> (String, usize) {
    let letters_end = |from: usize| {
        let mut j = from;
        while j < c.len() && c[j].is_ascii_alphabetic() {
            j += 1;
        }
        j
    };
    let end = letters_end(i);
    let base: String = c[i..end].iter().collect();
    let mut best = (base.clone(), end);
    let mut current = base;
    let mut k = end;
    while k + 1 < c.len() && c[k] == '.' && c[k + 1].is_ascii_alphabetic() {
        let m = letters_end(k + 1);
        let extended = format!("{current}.{}", c[k + 1..m].iter().collect::<String>());
        let prefix = format!("{extended}.");
        if !DOTTED
            .iter()
            .any(|d| *d == extended || d.starts_with(&prefix))
        {
            break;
        }
        current = extended;
        k = m;
        if DOTTED.contains(&current.as_str()) {
            best = (current.clone(), k);
        }
    }
    best
}
