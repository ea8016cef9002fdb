"""python -m backportr"""

from backportr.cli import run

run()
