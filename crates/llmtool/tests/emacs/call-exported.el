;;; call-exported.el --- call exported tools as gptel and llm.el do  -*- lexical-binding: t -*-

;; Stand-ins for `gptel-make-tool' and `llm-make-tool' that keep the slots they are given, and
;; a caller that runs a tool's :function the way both packages do: the argument values in the
;; order of :args, after a callback when the tool is :async. Each result is printed as one
;; line of JSON: {"name", "async", "answer"}.
;;
;; usage: emacs --batch -Q -l call-exported.el -f llmtool-call-exported LEXICAL FILE ARGS-JSON ...
;; LEXICAL is "t" or "nil": the binding the forms are evaluated with. Each FILE holds one form;
;; its ARGS-JSON is a JSON array of the values, in order (null for nil).

(defun gptel-make-tool (&rest slots) slots)
(defun llm-make-tool (&rest slots) slots)

(defun llmtool-test--value (value)
  "VALUE as gptel's JSON reader gives it: arrays as vectors, null as nil."
  (cond ((eq value :null) nil)
        (t value)))

(defun llmtool-test--call (tool values)
  "The answer of TOOL's :function to VALUES, waiting for an :async one's callback."
  (let ((function (plist-get tool :function)))
    (if (not (plist-get tool :async))
        (apply function values)
      (let ((answer nil)
            (waited 0))
        (apply function (lambda (result) (setq answer (or result ""))) values)
        (while (and (null answer) (< waited 600))
          (accept-process-output nil 0.1)
          (setq waited (1+ waited)))
        (or answer "(no answer in 60 s)")))))

(defun llmtool-call-exported ()
  (let ((lexical (equal (pop command-line-args-left) "t")))
    (while command-line-args-left
      (let* ((file (pop command-line-args-left))
             (values (mapcar #'llmtool-test--value
                             (append (json-parse-string (pop command-line-args-left)
                                                        :null-object :null)
                                     nil)))
             (form (with-temp-buffer
                     (insert-file-contents file)
                     (read (current-buffer))))
             (tool (eval form lexical))
             (answer (llmtool-test--call tool values)))
        (princ (json-serialize
                (list :file file
                      :name (plist-get tool :name)
                      :async (if (plist-get tool :async) t :false)
                      :category (or (plist-get tool :category) :null)
                      :answer answer)))
        (terpri)))))

;;; call-exported.el ends here
