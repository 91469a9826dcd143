//! The `:function` of an exported form that runs the tool: `llmtool call TOOL -`, its
//! arguments given as JSON on standard input, never through a shell. gptel and llm.el call a
//! tool's function with the argument values in the order of `:args` (after a callback, for an
//! `:async` tool); the function pairs them with the parameters' names. Asynchronous, it starts
//! a process and hands the answer to the callback when the process ends, so Emacs never waits;
//! synchronous, it waits for the answer. Either way a problem (a value that is no JSON, a
//! failed call) comes back as a string that starts with `Error:`, which the package shows the
//! model, rather than as a signal that ends the request.
//!
//! The program is `llmtool-program` when the user set it, else the `llmtool` on `exec-path`.

use super::printer;

/// The lambda that runs the tool `tool` (an absolute path or a `registry:` name), whose
/// parameters are `keys` in the order of `:args`; `asynchronous` takes the callback first.
/// Indented to follow ` :function `.
pub(crate) fn lambda(tool: &str, keys: &[&str], asynchronous: bool) -> String {
    let keys = keys.iter().map(|key| printer::string(key)).collect::<Vec<_>>().join(" ");
    let template = if asynchronous { ASYNC } else { SYNC };
    let tool = printer::string(tool);
    let body = fill(template, &[("@ARGUMENTS@", ARGUMENTS), ("@KEYS@", &keys), ("@TOOL@", &tool)]);
    // Every line after the first goes under ` :function `.
    let indent = " ".repeat(" :function ".len());
    body.trim_end().lines().enumerate().fold(String::new(), |mut out, (i, line)| {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&indent);
            }
        }
        out.push_str(line);
        out
    })
}

/// `template` with each of its markers replaced by its text, in one pass over the template:
/// what is put in is never read again, so a key or a path that holds a marker's name stays
/// inside its string.
fn fill(template: &str, markers: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    loop {
        let next = markers
            .iter()
            .filter_map(|(marker, text)| rest.find(marker).map(|at| (at, *marker, *text)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, marker, text)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str(text);
        rest = &rest[at + marker.len()..];
    }
}

/// The values paired with their names as a JSON object (a missing or `nil` value left out, so
/// that its default applies; a list of values as an array), for both lambdas.
const ARGUMENTS: &str = r"(dolist (key keys)
            (let ((value (pop given)))
              (when (and (consp value) (not (consp (car value))) (not (keywordp (car value))))
                (setq value (vconcat value)))
              (unless (null value) (puthash key value arguments))))";

/// Asynchronous: the process's sentinel finds what it needs on the process itself (its
/// callback, its error buffer), so the form works in a file without lexical binding too.
const ASYNC: &str = r#"(lambda (callback &rest given)
  (let ((keys '(@KEYS@))
        (arguments (make-hash-table :test 'equal))
        (output (generate-new-buffer " *llmtool call*"))
        (errors (generate-new-buffer " *llmtool call errors*")))
    (condition-case problem
        (progn
          @ARGUMENTS@
          (let* ((json (json-serialize arguments :null-object :null :false-object :json-false))
                 (program (or (bound-and-true-p llmtool-program) (executable-find "llmtool") "llmtool"))
                 (process
                  (make-process
                   :name "llmtool-call" :buffer output :stderr errors
                   :command (list program "call" @TOOL@ "-")
                   :connection-type 'pipe :noquery t :coding 'utf-8
                   :sentinel
                   (lambda (process _event)
                     (unless (process-live-p process)
                       (let* ((errors (process-get process 'llmtool-errors))
                              (stderr (get-buffer-process errors)))
                         (while (and stderr (process-live-p stderr))
                           (accept-process-output stderr 0.05))
                         (let ((answer (with-current-buffer (process-buffer process) (buffer-string)))
                               (said (with-current-buffer errors (buffer-string))))
                           (kill-buffer (process-buffer process))
                           (kill-buffer errors)
                           (funcall (process-get process 'llmtool-callback)
                                    (if (eql (process-exit-status process) 0)
                                        (replace-regexp-in-string "[ \t\n]+\\'" "" answer)
                                      (concat "Error: llmtool call: "
                                              (replace-regexp-in-string "[ \t\n]+\\'" "" said)))))))))))
            (process-put process 'llmtool-callback callback)
            (process-put process 'llmtool-errors errors)
            (process-send-string process json)
            (process-send-eof process)))
      (error
       (when (buffer-live-p output) (kill-buffer output))
       (when (buffer-live-p errors) (kill-buffer errors))
       (funcall callback (format "Error: %s" (error-message-string problem)))))))
"#;

const SYNC: &str = r#"(lambda (&rest given)
  (let ((keys '(@KEYS@))
        (arguments (make-hash-table :test 'equal)))
    (condition-case problem
        (progn
          @ARGUMENTS@
          (let ((json (json-serialize arguments :null-object :null :false-object :json-false))
                (program (or (bound-and-true-p llmtool-program) (executable-find "llmtool") "llmtool"))
                (errors (make-temp-file "llmtool-call"))
                (coding-system-for-write 'utf-8)
                (coding-system-for-read 'utf-8))
            (unwind-protect
                (with-temp-buffer
                  (if (eql (call-process-region json nil program nil (list t errors) nil "call" @TOOL@ "-") 0)
                      (replace-regexp-in-string "[ \t\n]+\\'" "" (buffer-string))
                    (erase-buffer)
                    (insert-file-contents errors)
                    (concat "Error: llmtool call: "
                            (replace-regexp-in-string "[ \t\n]+\\'" "" (buffer-string)))))
              (delete-file errors))))
      (error (format "Error: %s" (error-message-string problem))))))
"#;
