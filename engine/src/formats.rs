//! String formats: RFC 3339 date-times.

/// Whether `text` is an RFC 3339 `date-time` with a time-zone offset (as JSON Schema's `date-time`):
/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, `T` and `Z` in either case, days checked against the
/// calendar, and second 60 only at 23:59:60 UTC (a leap second).
pub(crate) fn is_date_time(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let num = |from: usize, len: usize| -> Option<u32> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0u32, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0'))
        })
    };
    let (Some(year), Some(month), Some(day)) = (num(0, 4), num(5, 2), num(8, 2)) else {
        return false;
    };
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (num(11, 2), num(14, 2), num(17, 2)) else {
        return false;
    };
    if b[13] != b':' || b[16] != b':' {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == from {
            return false;
        }
    }
    // The offset, in minutes east of UTC.
    let offset = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let (Some(oh), Some(om)) = (num(i + 1, 2), num(i + 4, 2)) else {
                return false;
            };
            if b.get(i + 3) != Some(&b':') || oh > 23 || om > 59 || i + 6 != b.len() {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    // A leap second is only ever inserted at 23:59:60 UTC (as JSON Schema's date-time requires).
    if second == 60 {
        let utc_minute = (i64::from(hour * 60 + minute) - offset).rem_euclid(24 * 60);
        return utc_minute == 23 * 60 + 59;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_date_time;

    #[test]
    fn accepts_rfc3339_date_times() {
        for good in [
            "2026-06-11T09:30:00Z",
            "2026-06-11t09:30:00z",
            "2026-06-11T09:30:00.123456+01:00",
            "2024-12-31T23:59:60Z",
            "2024-12-31T18:59:60-05:00",
            "2000-02-29T00:00:00Z",
        ] {
            assert!(is_date_time(good), "{good}");
        }
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "2026-06-11T09:30:00",
            "2026-06-11 09:30:00Z",
            "2026-06-11",
            "2025-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-06-11T24:00:00Z",
            "2026-06-11T09:60:00Z",
            "2026-06-11T09:30:61Z",
            "2026-06-11T09:30:60Z",
            "2024-02-29T23:59:60-05:30",
            "2026-06-11T09:30:00.Z",
            "2026-06-11T09:30:00+0100",
            "2026-06-11T09:30:00+24:00",
            "2026-06-11T09:30:00Z ",
            "2026-6-11T09:30:00Z",
            "２０２６-06-11T09:30:00Z",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }
}
