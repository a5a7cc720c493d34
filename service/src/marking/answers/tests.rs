//! Finding accepted answers in written lines, end to end.

use super::*;

/// Words laid out line by line, split at spaces: line `k` at y = 0.1 + 0.05k, words 0.06
/// apart.
fn lines<'a>(text: &[&'a str]) -> Vec<WordBox<'a>> {
    let mut out = Vec::new();
    for (k, line) in text.iter().enumerate() {
        for (j, word) in line.split_whitespace().enumerate() {
            out.push(WordBox {
                text: word,
                x: 0.1 + 0.06 * j as f64,
                y: 0.1 + 0.05 * k as f64,
                width: 0.05,
                height: 0.03,
            });
        }
    }
    out
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// `find` on lines of text: (answer index, quote, kind).
fn found(text: &[&str], accepted: &[&str], notes: &[&str]) -> Option<(usize, String, MatchKind)> {
    let words = lines(text);
    find(&words, &strings(accepted), &strings(notes)).map(|f| (f.answer, f.quote, f.how))
}

#[test]
fn finds_written_forms_of_each_example() {
    let cases: [(&str, &str, MatchKind); 25] = [
        ("$k = 1$, $k = 4$", "k = 1, k = 4", MatchKind::Exact),
        ("$k = 1$, $k = 4$", "k=1 and k=4", MatchKind::Exact),
        ("$1$ and $4$", "1 and 4", MatchKind::Exact),
        ("$1$ and $4$", "1, 4", MatchKind::Exact),
        ("$k < 1$ or $k > 4$", "k<1 or k>4", MatchKind::Exact),
        ("$k < 1$ or $k > 4$", "k < 1 or k > 4", MatchKind::Exact),
        (
            "${k : k < 1} union {k : k > 4}$",
            "{k: k<1} ∪ {k: k>4}",
            MatchKind::Exact,
        ),
        (
            "$k in (-infinity, 1) union (4, infinity)$",
            "k ∈ (−∞, 1) U (4, ∞)",
            MatchKind::Exact,
        ),
        ("$sqrt(25)$", "√25", MatchKind::Exact),
        ("$4x + y - 27 = 0$", "4x + y - 27 = 0", MatchKind::Exact),
        ("$-256x$", "−256x", MatchKind::Exact),
        ("$5/root(4, 3)$", "5/∜3", MatchKind::Exact),
        ("$2 pi$", "2π", MatchKind::Exact),
        ("$theta = 60 degree$", "θ = 60°", MatchKind::Exact),
        ("$x^2 - 5x + 4$", "x² - 5x + 4", MatchKind::Exact),
        ("$3/4$", "3/4", MatchKind::Exact),
        ("$3/4$", "0.75", MatchKind::Equivalent),
        ("$0.75$", ".75", MatchKind::Equivalent),
        ("$0.75$", "3/4", MatchKind::Equivalent),
        ("$y = 2x - 1$", "y=2x-1", MatchKind::Exact),
        ("$(3, -2)$", "(3,-2)", MatchKind::Exact),
        ("$a = 1.96$ m s$^(-2)$", "a = 1.96 m s^-2", MatchKind::Exact),
        ("$a = 1.96$ m s$^(-2)$", "a=1.96ms⁻²", MatchKind::Exact),
        ("$20 root(3)$", "20√3", MatchKind::Exact),
        ("$(10 sqrt(3))/3$", "(10√3)/3", MatchKind::Exact),
    ];
    for (accepted, written, how) in cases {
        let got = found(&[written], &[accepted], &[]);
        assert_eq!(
            got,
            Some((
                0,
                written.split_whitespace().collect::<Vec<_>>().join(" "),
                how
            )),
            "{accepted} vs {written}"
        );
    }
}

#[test]
fn rejects_what_is_not_the_answer() {
    let cases: [(&[&str], &[&str], &[&str]); 23] = [
        (&["13"], &["$3$"], &[]),
        (&["x^3"], &["$3$"], &[]),
        (&["3x + 4"], &["$3$"], &[]),
        (&["3x + 4 = 13"], &["$3$"], &[]),
        (&["k<1 and k>4"], &["$k < 1$ or $k > 4$"], &[]),
        (&["k < 1 , k > 4"], &["$k < 1$ or $k > 4$"], &[]),
        (&["x=3.5"], &["$x = 3$"], &[]),
        (&["x = 3.5"], &["$3$"], &[]),
        (&["-256"], &["$-256x$"], &[]),
        (&["256x"], &["$-256x$"], &[]),
        (&["y = 3"], &["$x = 3$"], &[]),
        (&["2 = 2x - 1"], &["$y = 2x - 1$"], &[]),
        (&["X = 3"], &["$x = 3$"], &[]),
        (&["x = 5 or x = -1"], &["$x = 5$", "$5$"], &["cso"]),
        (&["x = 5", "x = -1"], &["$x = 5$", "$5$"], &["cso"]),
        (&["x = 3 + y"], &["$x = 3$"], &[]),
        (&["(x+1)^2"], &["$x^2 + 2x + 1$"], &["oe"]),
        (&["6/8"], &["$3/4$"], &[]),
        (&["3.8"], &["$3.80$"], &[]),
        (&["3"], &["$3.0$"], &[]),
        (&["2 3"], &["$23$"], &[]),
        (&["1/2x"], &["$0.5 x$"], &[]),
        (&["3/4x"], &["$0.75x$"], &[]),
    ];
    for (written, accepted, notes) in cases {
        assert_eq!(
            found(written, accepted, notes),
            None,
            "{written:?} vs {accepted:?}"
        );
    }
}

#[test]
fn bare_numbers_stand_alone_at_the_end() {
    let three = &["$3$"];
    let cases: [(&[&str], Option<&str>); 14] = [
        (&["3"], Some("3")),
        (&["x = 3"], Some("3")),
        (&["3x + 4 = 13", "3x = 9", "x = 3"], Some("3")),
        (&["3x + 4 = 13", "3x = 9", "x=3"], Some("x=3")),
        (&["Answer: 3"], Some("3")),
        (&["answer 3"], Some("3")),
        (&["so 3"], Some("3")),
        (&["x = 3", "check: 3(3) + 4 = 13"], None),
        (&["x = 3 or 13"], None),
        (&["try 3"], None),
        (&["3 4"], None),
        (&["x = 3 ."], Some("3")),
        (&["(b) 3"], Some("3")),
        (&["(x) 3"], None),
    ];
    for (written, quote) in cases {
        let got = found(written, three, &[]).map(|f| f.1);
        assert_eq!(got.as_deref(), quote, "{written:?}");
    }
}

#[test]
fn labelled_answers_stand_at_a_line_end() {
    type Case<'a> = (&'a [&'a str], &'a [&'a str], Option<(usize, &'a str)>);
    let cases: [Case<'_>; 12] = [
        (&["x=3"], &["$x = 3$"], Some((0, "x=3"))),
        (&["x = 3", "so y = 5"], &["$x = 3$"], Some((0, "x = 3"))),
        (
            &["so k<1 or k>4"],
            &["$k < 1$ or $k > 4$"],
            Some((0, "k<1 or k>4")),
        ),
        (
            &["(k-1)(k-4) > 0", "so k<1 or k>4"],
            &["$k < 1$ or $k > 4$"],
            Some((0, "k<1 or k>4")),
        ),
        (
            &["k < 1 or", "k > 4"],
            &["$k < 1$ or $k > 4$"],
            Some((0, "k < 1 or k > 4")),
        ),
        (&["k < 1 or", "k > 4"], &["$k > 4$"], None),
        (&["0 < k < 1"], &["$k < 1$"], None),
        (
            &["x^2 - 4x - 5 = 0", "x = 5 or x = -1", "x > 0 so x = 5"],
            &["$x = 5$", "$5$"],
            Some((0, "x = 5")),
        ),
        (&["x = 5", "x = 5"], &["$x = 5$", "$5$"], Some((0, "x = 5"))),
        (&["x = 3 (reject)"], &["$x = 3$"], None),
        (
            &["fg(3) = 2(3) + 1 = 7"],
            &["$f g(3) = 7$", "$7$"],
            Some((1, "7")),
        ),
        (
            &["fg(3)=2(3)+1=7"],
            &["$f g(3) = 7$", "$7$"],
            Some((1, "fg(3)=2(3)+1=7")),
        ),
    ];
    for (written, accepted, want) in cases {
        let got = found(written, accepted, &[]).map(|f| (f.0, f.1));
        assert_eq!(
            got,
            want.map(|(i, q)| (i, q.to_string())),
            "{written:?} vs {accepted:?}"
        );
    }
}

#[test]
fn rounds_under_awrt() {
    let cases: [(&str, &str, &str, Option<MatchKind>); 20] = [
        (
            "$a = 1.96$ m s⁻²",
            "a = 1.955 m s^-2",
            "awrt 1.96",
            Some(MatchKind::Rounded),
        ),
        (
            "$R_C = 126$ N",
            "R_C = 125.7 N",
            "awrt 126",
            Some(MatchKind::Rounded),
        ),
        ("$t = 2 ln 5$", "t = 2.4 ln 5", "awrt 2", None),
        ("$x^2$", "x^2.1", "awrt 2", None),
        (
            "$0.3783$, compared with $abs(r) = 0.412$",
            "0.37829, compared with |r| = 0.412",
            "awrt",
            Some(MatchKind::Rounded),
        ),
        ("$1/3$", "0.333", "awrt 0.333", None),
        ("$2.35$", "2.349", "awrt 2.35", Some(MatchKind::Rounded)),
        ("$2.35$", "2.35", "awrt 2.35", Some(MatchKind::Exact)),
        ("$2.35$", "2.3512", "awrt 2.35", Some(MatchKind::Rounded)),
        ("$2.35$", "2.36", "awrt 2.35", None),
        ("$2.35$", "2.3", "awrt 2.35", None),
        ("$2.35$", "2.349", "oe", None),
        ("$0.693$", "0.6931", "awrt 0.693", Some(MatchKind::Rounded)),
        ("$0.693$", "0.69", "awrt 0.693", None),
        ("$0.693$", "0.694", "awrt 0.693", None),
        (
            "$arg z = -0.927$",
            "arg z = −0.9273",
            "awrt -0.927",
            Some(MatchKind::Rounded),
        ),
        ("$arg z = -0.927$", "arg z = 0.9273", "awrt -0.927", None),
        (
            "$alpha = 53.13°$",
            "α = 53.130°",
            "awrt 53.13°",
            Some(MatchKind::Equivalent),
        ),
        (
            "$alpha = 53.13°$",
            "α = 53.1301°",
            "awrt 53.13°",
            Some(MatchKind::Rounded),
        ),
        (
            "$theta = 103.3°$",
            "θ = 103.27°",
            "awrt",
            Some(MatchKind::Rounded),
        ),
    ];
    for (accepted, written, note, want) in cases {
        let got = found(&[written], &[accepted], &[note]).map(|f| f.2);
        assert_eq!(got, want, "{accepted} vs {written} ({note})");
    }
}

#[test]
fn rounds_under_significant_figures() {
    let notes = &["accept 3 s.f."];
    assert_eq!(
        found(&["5.10"], &["$5.0990$"], notes).map(|f| f.2),
        Some(MatchKind::Rounded)
    );
    assert_eq!(
        found(&["5.099"], &["$5.0990$"], notes).map(|f| f.2),
        Some(MatchKind::Rounded)
    );
    assert_eq!(found(&["5.1"], &["$5.0990$"], notes), None);
    assert_eq!(found(&["5.11"], &["$5.0990$"], notes), None);
    assert_eq!(found(&["5.10"], &["$5.0990$"], &[]), None);
}

#[test]
fn numbers_compare_by_value() {
    let cases: [(&str, &str, &[&str], Option<MatchKind>); 14] = [
        ("$0.75$", "0.750", &[], Some(MatchKind::Equivalent)),
        ("$3$", "3.0", &[], Some(MatchKind::Equivalent)),
        ("$x = 3/4$", "x = 0.75", &[], Some(MatchKind::Equivalent)),
        ("$x = 3/4$", "x = .75", &[], Some(MatchKind::Equivalent)),
        ("$x = -3/4$", "x = −0.75", &[], Some(MatchKind::Equivalent)),
        ("$3/4$", "0.75", &["cao"], None),
        ("$0.750$", "0.75", &[], None),
        ("$0.75$", "0.7500", &["cao"], Some(MatchKind::Equivalent)),
        ("$-8/7$", "-8/7", &[], Some(MatchKind::Exact)),
        ("$1/3$", "0.333", &[], None),
        ("$3/4$", "3/4", &["cao"], Some(MatchKind::Exact)),
        ("$(3, -2)$", "(3.0, -2)", &[], Some(MatchKind::Equivalent)),
        ("$k = 1/10$", "k = 0.1", &[], Some(MatchKind::Equivalent)),
        ("$3/4$", "4/1", &[], None),
    ];
    for (accepted, written, notes, want) in cases {
        let got = found(&[written], &[accepted], notes).map(|f| f.2);
        assert_eq!(got, want, "{accepted} vs {written} {notes:?}");
    }
}

#[test]
fn lists_match_in_another_order() {
    assert_eq!(
        found(&["k = 4, k = 1"], &["$k = 1$, $k = 4$"], &[]).map(|f| f.2),
        Some(MatchKind::Equivalent)
    );
    assert_eq!(
        found(&["4 and 1"], &["$1$ and $4$"], &[]).map(|f| f.2),
        Some(MatchKind::Equivalent)
    );
    assert_eq!(
        found(&["d = 3 and a = 11"], &["$a = 11$ and $d = 3$"], &[]).map(|f| f.2),
        Some(MatchKind::Equivalent)
    );
    assert_eq!(found(&["k>4 or k<1"], &["$k < 1$ or $k > 4$"], &[]), None);
    assert_eq!(found(&["(-2, 3)"], &["$(3, -2)$"], &[]), None);
    assert_eq!(found(&["k = 1, k = 1"], &["$k = 1$, $k = 4$"], &[]), None);
}

#[test]
fn ignores_ocr_noise() {
    let words = vec![
        WordBox {
            text: "k<1",
            x: 0.1,
            y: 0.2,
            width: 0.05,
            height: 0.03,
        },
        WordBox {
            text: ".",
            x: 0.16,
            y: 0.21,
            width: 0.005,
            height: 0.005,
        },
        WordBox {
            text: "or",
            x: 0.2,
            y: 0.2,
            width: 0.03,
            height: 0.03,
        },
        WordBox {
            text: "'",
            x: 0.24,
            y: 0.19,
            width: 0.005,
            height: 0.005,
        },
        WordBox {
            text: "k>4",
            x: 0.3,
            y: 0.2,
            width: 0.05,
            height: 0.03,
        },
        WordBox {
            text: "....",
            x: 0.1,
            y: 0.4,
            width: 0.5,
            height: 0.01,
        },
    ];
    let f = find(&words, &strings(&["$k < 1$ or $k > 4$"]), &[]).expect("found");
    assert_eq!(f.words, vec![0, 2, 4]);
    assert_eq!(f.quote, "k<1 or k>4");
    assert_eq!(f.how, MatchKind::Exact);
}

#[test]
fn reads_lines_in_order_whatever_the_word_order() {
    // Given bottom line first and right to left; slight baseline drift within lines.
    let words = vec![
        WordBox {
            text: "5",
            x: 0.4,
            y: 0.301,
            width: 0.02,
            height: 0.03,
        },
        WordBox {
            text: "=",
            x: 0.3,
            y: 0.298,
            width: 0.02,
            height: 0.03,
        },
        WordBox {
            text: "x",
            x: 0.2,
            y: 0.3,
            width: 0.02,
            height: 0.03,
        },
        WordBox {
            text: "-1",
            x: 0.5,
            y: 0.205,
            width: 0.03,
            height: 0.03,
        },
        WordBox {
            text: "=",
            x: 0.4,
            y: 0.2,
            width: 0.02,
            height: 0.03,
        },
        WordBox {
            text: "x",
            x: 0.3,
            y: 0.195,
            width: 0.02,
            height: 0.03,
        },
        WordBox {
            text: "or",
            x: 0.25,
            y: 0.2,
            width: 0.03,
            height: 0.03,
        },
        WordBox {
            text: "x=5",
            x: 0.1,
            y: 0.2,
            width: 0.05,
            height: 0.03,
        },
    ];
    let f = find(&words, &strings(&["$x = 5$", "$5$"]), &strings(&["cso"])).expect("found");
    assert_eq!(f.words, vec![2, 1, 0]);
    assert_eq!(f.quote, "x = 5");
    assert_eq!(f.answer, 0);
    // Top line only: the two values must not be awarded.
    let top: Vec<WordBox<'_>> = words[3..].to_vec();
    assert_eq!(
        find(&top, &strings(&["$x = 5$", "$5$"]), &strings(&["cso"])),
        None
    );
}

#[test]
fn quotes_words_as_written() {
    let words = lines(&["so", "k <1", "or  k>4 ."]);
    let f = find(&words, &strings(&["$k < 1$ or $k > 4$"]), &[]).expect("found");
    assert_eq!(f.quote, "k <1 or k>4");
    assert_eq!(f.words, vec![1, 2, 3, 4]);
}

#[test]
fn later_statements_of_a_label_override() {
    let acc = &["$x = 5$"];
    assert_eq!(found(&["x = 5", "x = -1"], acc, &[]), None);
    assert_eq!(found(&["x = 5", "so x > 0"], acc, &[]), None);
    assert_eq!(
        found(&["x = -1", "x = 5"], acc, &[]).map(|f| f.1),
        Some("x = 5".to_string())
    );
    assert_eq!(
        found(&["x = 5", "y = 2x - 1 = 9"], acc, &[]).map(|f| f.1),
        Some("x = 5".to_string())
    );
    // A continuation line carries the statement on.
    assert_eq!(found(&["y = 2x - 1", "+ 3"], &["$y = 2x - 1$"], &[]), None);
}

#[test]
fn negative_values_may_start_a_line() {
    assert_eq!(
        found(&["expand:", "−256x"], &["$-256x$"], &[]).map(|f| f.1),
        Some("−256x".to_string())
    );
    assert_eq!(
        found(&["2^8 x (-1/4)", "= -256x"], &["$-256x$"], &[]).map(|f| f.1),
        Some("-256x".to_string())
    );
    // An expression left open at a line end carries on.
    assert_eq!(found(&["x^2 + 5x -", "256x"], &["$256x$"], &[]), None);
    // Nor can a run start with an operator that needs something before it.
    assert_eq!(found(&["x^2", "* 4"], &["$* 4$"], &[]), None);
}

#[test]
fn derivatives_and_fractions_of_products() {
    let cases: [(&str, &str); 5] = [
        ("$3x (dif y)/(dif x) + 3y$", "3x dy/dx + 3y"),
        ("$(dif y)/(dif x) = -8/7$", "dy/dx = -8/7"),
        ("$(5 pi)/6$", "5π/6"),
        ("$(1000 sqrt(3))/49$", "1000√3/49"),
        ("$sin B = (5 sin 38°)/(4.34)$", "sin B = 5 sin 38° / 4.34"),
    ];
    for (accepted, written) in cases {
        assert_eq!(
            found(&[written], &[accepted], &[]).map(|f| f.2),
            Some(MatchKind::Exact),
            "{accepted} vs {written}"
        );
    }
    assert_eq!(found(&["1/2x"], &["$1/(2x)$"], &[]), None);
    assert_eq!(found(&["2(5π)/6"], &["$(5 pi)/6$"], &[]), None);
}

#[test]
fn a_full_page_is_searched_quickly() {
    let line = "3x + 4 = 13 so 3x = 9 and then x = 3 is what we get after all";
    let text: Vec<&str> = std::iter::repeat_n(line, 40).collect();
    let words = lines(&text);
    let accepted = strings(&[
        "Reject $H_0$: there is evidence that the mean cycle time has increased",
        "$x = 5$",
        "$(x - 3)^2 + (y + 2)^2 = 25$",
    ]);
    let started = std::time::Instant::now();
    assert_eq!(find(&words, &accepted, &[]), None);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn stacked_fractions_are_not_read_as_lines() {
    let word = |text, x, y| WordBox {
        text,
        x,
        y,
        width: 0.02,
        height: 0.03,
    };
    // `x = 3/4` with the fraction stacked: the numerator and denominator sit apart from the
    // line of `x =`, one of them grouped with it.
    let words = vec![
        word("x", 0.1, 0.2),
        word("=", 0.13, 0.2),
        word("3", 0.16, 0.18),
        word("4", 0.16, 0.215),
    ];
    assert_eq!(find(&words, &strings(&["$x = 4$", "$4$"]), &[]), None);
    assert_eq!(find(&words, &strings(&["$3$"]), &[]), None);
    // With only a bar read under the numerator (the denominator lost).
    let words = vec![
        word("x", 0.1, 0.2),
        word("=", 0.13, 0.2),
        word("3", 0.16, 0.2),
        WordBox {
            text: "__",
            x: 0.155,
            y: 0.232,
            width: 0.03,
            height: 0.004,
        },
    ];
    assert_eq!(find(&words, &strings(&["$x = 3$", "$3$"]), &[]), None);
    // Ordinary lines one under another are not stacked.
    assert_eq!(
        found(&["3x = 9", "x = 3"], &["$x = 3$"], &[]).map(|f| f.1),
        Some("x = 3".to_string())
    );
    // Nor are a long printed rule under the answer.
    let words = vec![
        word("x", 0.1, 0.2),
        word("=", 0.13, 0.2),
        word("3", 0.16, 0.2),
        WordBox {
            text: "________________",
            x: 0.05,
            y: 0.232,
            width: 0.6,
            height: 0.005,
        },
    ];
    assert_eq!(
        find(&words, &strings(&["$x = 3$"]), &[]).map(|f| f.quote),
        Some("x = 3".to_string())
    );
}

#[test]
fn prose_and_units() {
    assert_eq!(
        found(&["angle ABC = 45.2°"], &["angle $A B C = 45.2°$"], &[]).map(|f| f.2),
        Some(MatchKind::Exact)
    );
    assert_eq!(
        found(&["centre (3, -2)"], &["centre $(3, -2)$"], &[]).map(|f| f.2),
        Some(MatchKind::Exact)
    );
    assert_eq!(
        found(&["8 m"], &["$8$ m"], &[]).map(|f| f.2),
        Some(MatchKind::Exact)
    );
    assert_eq!(found(&["8 cm"], &["$8$ m"], &[]), None);
    assert_eq!(found(&["8 m"], &["$8$"], &[]), None);
    assert_eq!(
        found(
            &["H0: p = 0.25, H1: p < 0.25"],
            &["$H_0: p = 0.25$, $H_1: p < 0.25$"],
            &[]
        ),
        None
    );
    assert_eq!(
        found(
            &["H₀: p = 0.25, H₁: p < 0.25"],
            &["$H_0: p = 0.25$, $H_1: p < 0.25$"],
            &[]
        )
        .map(|f| f.2),
        Some(MatchKind::Exact)
    );
}

#[test]
fn multiplication_signs() {
    for written in ["3×4", "3x4", "3 x 4", "3 × 4", "3·4", "3*4"] {
        assert_eq!(
            found(&[written], &["$3 times 4$"], &[]).map(|f| f.2),
            Some(MatchKind::Exact),
            "{written}"
        );
    }
    assert_eq!(found(&["12"], &["$3 times 4$"], &[]), None);
}

#[test]
fn blank_answer_spaces() {
    let blank = |texts: &[&str]| {
        let words: Vec<WordBox<'_>> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| WordBox {
                text: t,
                x: 0.1 * i as f64,
                y: 0.5,
                width: 0.01,
                height: 0.01,
            })
            .collect();
        is_blank(&words)
    };
    assert!(blank(&[]));
    assert!(blank(&[".", "-", "'", " ", ""]));
    assert!(blank(&["..........", "____", "~"]));
    assert!(blank(&["|", ",", "="]));
    assert!(blank(&["--", "—", ".,", "|'"]));
    assert!(!blank(&["=="]));
    assert!(!blank(&["x=", "."]));
    assert!(!blank(&[".", "3"]));
    assert!(!blank(&["x"]));
    assert!(!blank(&["-1"]));
    assert!(!blank(&["π"]));
    assert!(!blank(&["<=", "."]));
}

#[test]
fn nothing_to_find() {
    assert_eq!(found(&[], &["$3$"], &[]), None);
    assert_eq!(found(&["3"], &[], &[]), None);
    assert_eq!(found(&["3"], &["", "$$"], &[]), None);
    assert_eq!(found(&[". ' ."], &["$3$"], &[]), None);
}

#[test]
fn prefers_the_strongest_match_of_a_run() {
    let accepted = &["$r = 0.25$ and $r = 0.75$", "$r = 1/4$ and $r = 3/4$"];
    assert_eq!(
        found(&["r = 1/4 and r = 3/4"], accepted, &[]),
        Some((1, "r = 1/4 and r = 3/4".to_string(), MatchKind::Exact))
    );
    assert_eq!(
        found(&["r = 0.250 and r = 0.75"], accepted, &[]),
        Some((
            0,
            "r = 0.250 and r = 0.75".to_string(),
            MatchKind::Equivalent
        ))
    );
}

#[test]
fn prefers_the_first_in_reading_order() {
    let got = found(&["x = 5"], &["$5$", "$x = 5$"], &[]);
    assert_eq!(got, Some((1, "x = 5".to_string(), MatchKind::Exact)));
}

#[test]
fn odd_boxes_do_not_panic() {
    let words = vec![
        WordBox {
            text: "x=3",
            x: f64::NAN,
            y: f64::INFINITY,
            width: -1.0,
            height: 0.0,
        },
        WordBox {
            text: "√",
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: f64::NAN,
        },
        WordBox {
            text: "((",
            x: 0.5,
            y: 0.5,
            width: 0.1,
            height: 0.1,
        },
        WordBox {
            text: ")]}",
            x: 0.6,
            y: 0.5,
            width: 0.1,
            height: 0.1,
        },
        WordBox {
            text: "99999999999999999999999999999999999999999",
            x: 0.7,
            y: 0.5,
            width: 0.1,
            height: 0.1,
        },
    ];
    let _ = find(
        &words,
        &strings(&["$x = 3$", "$root(, )$", "$a/0$", "$1/0$"]),
        &strings(&["awrt 99999999999999999999999999999999999999"]),
    );
    let _ = normalise("$root(3)$ ^ _ √[ ] $sqrt()$ frac(1) 1/0 0/0 ⁽²⁾ x₍₁₎");
    let deep = format!("{}x{}", "(".repeat(20_000), ")".repeat(20_000));
    assert!(normalise(&deep).contains('x'));
    let deep_sqrt = format!("{}x{}", "sqrt(".repeat(20_000), ")".repeat(20_000));
    assert!(normalise(&deep_sqrt).contains('x'));
    let words = [WordBox {
        text: &deep,
        x: 0.1,
        y: 0.1,
        width: 0.1,
        height: 0.1,
    }];
    assert_eq!(find(&words, &strings(&["$x$"]), &[]), None);
}
