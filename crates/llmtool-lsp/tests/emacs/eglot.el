;;; eglot.el --- Emacs's eglot on `llmtool lsp', in batch mode  -*- lexical-binding: t -*-
;; Opens a tool file, waits for its diagnostics in flymake, formats the buffer and renames a
;; variable through the server, saves, and writes what happened to $RESULT, one fact a line.
;; Run by scripts/lsp_clients.py with Debian's emacs-nox and elpa-eglot.

(load (expand-file-name "harness.el" (file-name-directory load-file-name)))
(require 'eglot)
(require 'flymake)

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
