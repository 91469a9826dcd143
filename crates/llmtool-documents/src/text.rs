//! Plain text in any common encoding: UTF-8, UTF-16 with its byte-order mark, and the legacy
//! ones (Windows-1252, ISO-8859-x, `Shift_JIS`, GBK, ...) guessed from the bytes by `chardetng`,
//! the detector Firefox uses.

/// The text of `bytes`.
pub(crate) fn decode(bytes: &[u8]) -> String {
    if let Some((encoding, bom_length)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom_length..]);
        return text.into_owned();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_owned();
    }
    // A document runs no script, so ISO-2022-JP is as likely as any other encoding; UTF-8 is
    // ruled out already (the bytes are not valid UTF-8).
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Allow);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    text.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_encodings_are_read() {
        assert_eq!(decode("café".as_bytes()), "café");
        assert_eq!(decode(b"\xEF\xBB\xBFcaf\xC3\xA9"), "café");
        assert_eq!(decode(b"\xFF\xFEc\0a\0f\0\xE9\0"), "café");
        assert_eq!(decode(b"\xFE\xFF\0c\0a\0f\0\xE9"), "café");
        let latin = b"Le caf\xE9 est tr\xE8s bon, et la cr\xE8me br\xFBl\xE9e aussi.";
        assert_eq!(decode(latin), "Le café est très bon, et la crème brûlée aussi.");
    }
}
