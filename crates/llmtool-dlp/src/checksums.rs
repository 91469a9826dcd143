//! The check digits that tell a real number from a random one. Each is a few lines of
//! arithmetic from the number's public specification; no maintained crate covers this set,
//! and pulling one crate per check would cost more than it saves. IBANs are checked by
//! `iban_validate` instead, since their per-country formats are a table worth keeping current.

/// The digits of `text`, skipping anything else (spaces, dashes, dots).
pub(crate) fn digits(text: &str) -> Vec<u8> {
    text.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect()
}

/// The Luhn check of payment card numbers (ISO/IEC 7812-1).
pub(crate) fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d }
        })
        .sum();
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// The Verhoeff check of Aadhaar numbers (a dihedral-group checksum that catches every
/// single-digit error and every swap of neighbours).
pub(crate) fn verhoeff(digits: &[u8]) -> bool {
    const D: [[u8; 10]; 10] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
        [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
        [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
        [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
        [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
        [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ];
    const P: [[u8; 10]; 8] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
        [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
        [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
        [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
        [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
        [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ];
    let mut check = 0u8;
    for (i, &d) in digits.iter().rev().enumerate() {
        check = D[usize::from(check)][usize::from(P[i % 8][usize::from(d)])];
    }
    check == 0
}

/// The modulus-11 check digit of UK NHS numbers (10 digits, weights 10 down to 2).
pub(crate) fn nhs(digits: &[u8]) -> bool {
    if digits.len() != 10 {
        return false;
    }
    let sum: u32 = digits[..9].iter().zip((2..=10).rev()).map(|(&d, w)| u32::from(d) * w).sum();
    match 11 - sum % 11 {
        11 => digits[9] == 0,
        10 => false,
        check => u32::from(digits[9]) == check,
    }
}

/// The check letter of a Spanish DNI (eight digits) or NIE (X, Y or Z, then seven digits).
pub(crate) fn spanish_id(id: &str) -> bool {
    const LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    let id: Vec<u8> = id.bytes().filter(|b| *b != b'-').collect();
    let Some((&letter, body)) = id.split_last() else { return false };
    let mut number = 0u32;
    for (i, &b) in body.iter().enumerate() {
        let digit = match b {
            b'X' if i == 0 => 0,
            b'Y' if i == 0 => 1,
            b'Z' if i == 0 => 2,
            b'0'..=b'9' => u32::from(b - b'0'),
            _ => return false,
        };
        number = number * 10 + digit;
    }
    body.len() == 8 && LETTERS[(number % 23) as usize] == letter
}

/// The two check digits of a Brazilian CPF (eleven digits, not all the same).
pub(crate) fn cpf(digits: &[u8]) -> bool {
    if digits.len() != 11 || digits.iter().all(|&d| d == digits[0]) {
        return false;
    }
    let check = |len: usize| {
        let sum: u32 = digits[..len]
            .iter()
            .zip((2..=len as u32 + 1).rev())
            .map(|(&d, w)| u32::from(d) * w)
            .sum();
        let rest = sum * 10 % 11;
        if rest == 10 { 0 } else { rest as u8 }
    };
    check(9) == digits[9] && check(10) == digits[10]
}

/// The check digit of a Korean resident registration number (13 digits). Numbers issued
/// since October 2020 have random last digits, so a failed check does not rule a number out.
pub(crate) fn korean_rrn(digits: &[u8]) -> bool {
    const WEIGHTS: [u32; 12] = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5];
    if digits.len() != 13 {
        return false;
    }
    let sum: u32 = digits[..12].iter().zip(WEIGHTS).map(|(&d, w)| u32::from(d) * w).sum();
    (11 - sum % 11) % 10 == u32::from(digits[12])
}

/// The Shannon entropy of `text` in bits per byte, as gitleaks measures a secret's.
pub(crate) fn entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in text.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = text.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_numbers_pass_luhn_and_a_changed_digit_fails() {
        assert!(luhn(&digits("4111 1111 1111 1111")));
        assert!(luhn(&digits("378282246310005")));
        assert!(!luhn(&digits("4111 1111 1111 1112")));
        assert!(!luhn(&[]));
    }

    #[test]
    fn verhoeff_accepts_a_valid_number_and_catches_a_swap() {
        // 236 with its Verhoeff check digit 3 is the algorithm's textbook example.
        assert!(verhoeff(&digits("2363")));
        assert!(!verhoeff(&digits("3263")));
        assert!(verhoeff(&digits("4991 1866 5246")));
        assert!(!verhoeff(&digits("4991 1866 5243")));
    }

    #[test]
    fn nhs_numbers_check_modulus_eleven() {
        assert!(nhs(&digits("943 476 5919")));
        assert!(!nhs(&digits("943 476 5918")));
        assert!(!nhs(&digits("123")));
    }

    #[test]
    fn spanish_ids_check_their_letter() {
        assert!(spanish_id("12345678Z"));
        assert!(spanish_id("X1234567L"));
        assert!(!spanish_id("12345678A"));
        assert!(!spanish_id("Q1234567L"));
    }

    #[test]
    fn cpf_checks_both_digits_and_rejects_repeats() {
        assert!(cpf(&digits("529.982.247-25")));
        assert!(!cpf(&digits("529.982.247-26")));
        assert!(!cpf(&digits("111.111.111-11")));
    }

    #[test]
    fn korean_rrn_checks_its_last_digit() {
        assert!(korean_rrn(&digits("800101-1234560")));
        assert!(!korean_rrn(&digits("800101-1234561")));
    }

    #[test]
    fn entropy_is_zero_for_one_symbol_and_grows_with_variety() {
        assert!(entropy("aaaa").abs() < f64::EPSILON);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }
}
