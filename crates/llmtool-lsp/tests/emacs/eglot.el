;;; eglot.el --- Emacs's eglot on `llmtool lsp', in batch mode  -*- lexical-binding: t -*-
;; Opens a tool file, waits for its diagnostics in flymake, formats the buffer and renames a
;; variable through the server, saves, and writes what happened to $RESULT, one fact a line.
;; Run by scripts/lsp_clients.py with Debian's emacs-nox and elpa-eglot.

;; Debian's elpa-* packages live here; `-Q' skips the site files that would add it.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'flymake)

(defvar llmtool-result nil)
(defun llmtool-note (fmt &rest args)
  (push (apply #'format fmt args) llmtool-result))
(defun llmtool-finish ()
  (with-temp-file (getenv "RESULT")
    (insert (mapconcat #'identity (reverse llmtool-result) "\n") "\n"))
  (kill-emacs 0))
(defun llmtool-wait (predicate seconds)
  "Process server output until PREDICATE holds or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(condition-case problem
    (progn
      (setq eglot-server-programs `((js-mode . (,(getenv "LLMTOOL") "lsp"))))
      (find-file (getenv "TOOL_FILE"))
      (js-mode)
      (flymake-mode 1)
      (apply #'eglot (eglot--guess-contact))
      (if (not (llmtool-wait (lambda () (flymake-diagnostics)) 20))
          (llmtool-note "no diagnostics")
        (llmtool-note "diagnostics %d" (length (flymake-diagnostics))))
      (eglot-format-buffer)
      (save-buffer)
      (llmtool-note "formatted")
      (goto-char (point-min))
      (search-forward "{{level")
      (eglot-rename "expertise")
      (save-buffer)
      (llmtool-note "renamed"))
  (error (llmtool-note "error %S" problem)))
(llmtool-finish)
