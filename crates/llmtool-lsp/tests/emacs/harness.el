;;; harness.el --- What the Emacs client tests share  -*- lexical-binding: t -*-
;; Loads Debian's elpa-* packages and gives each test a way to note facts, wait for the
;; server, and write the facts to $RESULT (one a line) when it is done.

;; Debian's elpa-* packages live here; `-Q' skips the site files that would add it.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)

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
