"""Assessment for practice: the quizzes and their grading rules, the exercises (predict-then-run,
written answers, tasks) and the practice report of ``decodelab grade``. Imports no torch.
"""
